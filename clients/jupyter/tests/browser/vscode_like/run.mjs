// The timeline widget outside JupyterLab (see host.ts): a plain page served at the Jupyter
// server's origin (playwright routes it), HTMLManager + a real kernel over the server's
// websocket, anywidget's classic AMD module. Checks the widget renders, a wheel zoom sends a
// range request answered in the binary columns layout and drawn, and a click shows details.
//
//   node run.mjs NOTEBOOK_URL OUT_DIR HOST_BUNDLE ANYWIDGET_AMD PROFILE
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_MODULES_DIR, "noop.js"));
const { chromium } = require("playwright-core");

const [nbUrl, outDir, bundle, amd, profile] = process.argv.slice(2);
const u = new URL(nbUrl);
const token = u.searchParams.get("token");
fs.mkdirSync(outDir, { recursive: true });
const userDataDir = fs.mkdtempSync(path.join(outDir, "chromium-profile-"));
const result = { ok: false, steps: [] };
const step = (name, data = {}) => {
  result.steps.push({ name, ...data });
  console.log(`[html-manager] ${name} ${JSON.stringify(data)}`);
};

const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // the page is answered by playwright (no address space): let it reach the local server
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 900 },
});
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  const errors = [];
  page.on("console", (m) => console.log(`[browser ${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => {
    console.log(`[browser pageerror] ${e.message}`);
    errors.push(e.message);
  });
  await page.route(`${u.origin}/nsys-host.html`, (r) => r.fulfill({ contentType: "text/html",
    body: '<!doctype html><meta charset="utf-8"><title>nsys-ai widget host</title><body><div id="out"></div>' +
      '<script src="/nsys-host.js"></script></body>' }));
  await page.route(`${u.origin}/nsys-host.js`, (r) => r.fulfill({ contentType: "text/javascript", body: fs.readFileSync(bundle) }));
  await page.route(`${u.origin}/nsys-anywidget.js`, (r) => r.fulfill({ contentType: "text/javascript", body: fs.readFileSync(amd) }));
  await page.goto(`${u.origin}/nsys-host.html`, { waitUntil: "load" });
  const code = `import nsys_ai\np = nsys_ai.open(${JSON.stringify(profile)})\nw = p.show(height=360)\nw`;
  await page.evaluate((s) => window.nsysHost(s), { token, code, anywidgetUrl: "/nsys-anywidget.js" });
  step("executed", { log: await page.evaluate(() => window.nsysHostLog) });

  const tl = page.locator(".nsys-tl").first();
  await tl.waitFor({ state: "visible", timeout: 60000 });
  await page.waitForFunction(() => Number(document.querySelector(".nsys-tl")?.dataset.answered || 0) >= 1, null, { timeout: 60000 });
  const before = await tl.evaluate((e) => ({ ...e.dataset }));
  step("timeline first range answered", before);
  if (Number(before.failed || 0) > 0) throw new Error("first range failed");

  const box = await tl.locator("canvas").boundingBox();
  await page.mouse.move(box.x + 210 + (box.width - 210) * 0.4, box.y + 60);
  const trips = [];
  for (let i = 0; i < 8; i++) {
    await page.mouse.wheel(0, i < 6 ? -300 : 300);
    const seq = await tl.evaluate((e) => Number(e.dataset.viewSeq));
    await page.waitForFunction((s) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.drawnSeq || 0) >= s && d.answered === d.requests;
    }, seq, { timeout: 30000 });
    trips.push(await tl.evaluate((e) => ({ ...e.dataset })));
  }
  const after = trips[trips.length - 1];
  step("zoomed", after);
  if (Number(after.failed || 0) > 0) throw new Error(`zoom failed: ${JSON.stringify(after)}`);
  if (!(Number(after.answered) >= Number(before.answered) + 8)) throw new Error("zoom requests not answered");
  if (!/^(json|bin)\//.test(after.lastFormat || "")) throw new Error(`reply format ${after.lastFormat}`);
  if (process.env.NSYS_AI_REQUIRE_COLUMNS === "1" && !/\/columns$/.test(after.lastFormat)) {
    throw new Error(`the server did not answer in the columns format: ${after.lastFormat}`);
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const pings = [];
  for (let i = 0; i < 8; i++) pings.push((await tl.evaluate((e) => e.__nsysPing())).ms);
  result.zoom = { inputToDrawP50: med(trips.map((t) => Number(t.lastInputToDrawMs))), emptyMessageP50: med(pings), n: trips.length };
  step("zoom round trips", result.zoom);
  const shot = await tl.screenshot({ path: path.join(outDir, "timeline-html-manager.png") });
  if (shot.length < 5000) throw new Error("timeline screenshot looks empty");

  // click a kernel on the first GPU row: the details panel (kernel/details + explain)
  let clicked = false;
  for (let k = 0; k < 24 && !clicked; k++) {
    await page.mouse.click(box.x + 215 + ((box.width - 220) * k) / 24, box.y + 22 + 8);
    clicked = await tl.evaluate((e) => e.dataset.detailsFor !== undefined);
  }
  if (!clicked) throw new Error("no kernel found to click on the first GPU row");
  await page.waitForFunction(() => {
    const d = document.querySelector(".nsys-tl").dataset;
    return d.detailsShown !== undefined && d.detailsShown === d.detailsFor;
  }, null, { timeout: 30000 });
  step("details shown", { opId: await tl.evaluate((e) => e.dataset.detailsShown) });
  if (errors.length) throw new Error(`page errors: ${errors.join(" | ")}`);
  result.ok = true;
} catch (e) {
  result.error = String(e && e.stack ? e.stack : e);
  console.error(`[html-manager] FAILED: ${result.error}`);
  try {
    await browser.pages()[0]?.screenshot({ path: path.join(outDir, "failure-html-manager.png") });
  } catch {}
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  fs.writeFileSync(path.join(outDir, "html-manager-result.json"), JSON.stringify(result, null, 2));
}
process.exit(result.ok ? 0 : 1);
