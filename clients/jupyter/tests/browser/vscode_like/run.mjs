// The timeline widget outside JupyterLab (see host.ts): a plain page served at the Jupyter
// server's origin (playwright routes it), HTMLManager + a real kernel over the server's
// websocket, anywidget's classic AMD module. Checks the widget renders, a wheel zoom sends a
// range request answered in the binary columns layout and drawn, and a click shows details.
//
//   node run.mjs NOTEBOOK_URL OUT_DIR HOST_BUNDLE ANYWIDGET_AMD PROFILE
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { checkTimeline, finishRun, launchChromium } from "../timeline_checks.mjs";

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

const browser = await launchChromium(chromium, userDataDir);
let error;
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
  const code = `import nsys_ai_native\np = nsys_ai_native.open(${JSON.stringify(profile)})\nw = p.show(height=360)\nw`;
  await page.evaluate((s) => window.nsysHost(s), { token, code, anywidgetUrl: "/nsys-anywidget.js" });
  step("executed", { log: await page.evaluate(() => window.nsysHostLog) });

  result.zoom = await checkTimeline(page, { screenshot: path.join(outDir, "timeline-html-manager.png"), step });
  if (errors.length) throw new Error(`page errors: ${errors.join(" | ")}`);
  result.ok = true;
} catch (e) {
  error = e;
}
await finishRun("html-manager", { browser, userDataDir, outDir, result, error });
