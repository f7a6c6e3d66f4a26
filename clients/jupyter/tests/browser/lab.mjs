// Drives a real JupyterLab in headless Chromium (Debian's, via playwright-core):
// runs the widget notebook, checks the timeline and the NVTX tree render, zooms
// with the mouse wheel and checks that the zoom's `timeline/range` request was
// answered by the Python side. Writes screenshots and a JSON summary to OUT.
//
//   node lab.mjs URL OUT_DIR
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { checkAxis, pngStats, zoomInOtherLayouts } from "./timeline_checks.mjs";

// playwright-core lives in clients/jupyter/js/node_modules (NODE_MODULES_DIR)
const require = createRequire(path.join(process.env.NODE_MODULES_DIR, "noop.js"));
const { chromium } = require("playwright-core");

const [url, outDir] = process.argv.slice(2);
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
fs.mkdirSync(outDir, { recursive: true });
const userDataDir = fs.mkdtempSync(path.join(outDir, "chromium-profile-"));
const result = { ok: false, steps: [] };
const step = (name, data = {}) => {
  result.steps.push({ name, ...data });
  console.log(`[lab] ${name} ${JSON.stringify(data)}`);
};

function fail(msg) {
  throw new Error(msg);
}

const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: chromiumPath,
  headless: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
  viewport: { width: 1280, height: 1000 },
});
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.on("console", (m) => {
    if (m.type() === "error" || m.text().includes("nsys-ai")) console.log(`[browser ${m.type()}] ${m.text()}`);
  });
  const widgetErrors = [];
  page.on("pageerror", (e) => {
    console.log(`[browser pageerror] ${e.message}`);
    if (/anywidget|nsys/i.test(`${e.message} ${e.stack ?? ""}`)) widgetErrors.push(e.message);
  });
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 120000 });
  await page.waitForFunction(() => window.jupyterapp && document.querySelector(".jp-Notebook"), null, { timeout: 120000 });
  step("lab loaded");
  // wait for the kernel to be idle, then run every cell
  await page.waitForFunction(() => {
    const w = window.jupyterapp.shell.currentWidget;
    return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel &&
      w.sessionContext.session.kernel.status === "idle";
  }, null, { timeout: 120000 });
  await page.evaluate(() => window.jupyterapp.commands.execute("notebook:run-all-cells"));
  step("run all cells");

  // -- the timeline ---------------------------------------------------------------
  const tl = page.locator(".nsys-tl").first();
  await tl.waitFor({ state: "visible", timeout: 120000 });
  await page.waitForFunction(() => Number(document.querySelector(".nsys-tl")?.dataset.answered || 0) >= 1, null,
    { timeout: 60000 });
  await page.waitForTimeout(300); // let the frame paint
  const before = await tl.evaluate((e) => ({ ...e.dataset, status: e.querySelector(".nsys-tl-status").textContent }));
  step("timeline first range answered", before);
  if (Number(before.failed || 0) > 0) fail(`range request failed: ${before.status}`);
  const shot1 = await tl.screenshot({ path: path.join(outDir, "timeline.png") });
  const s1 = await pngStats(page, shot1);
  step("timeline screenshot", s1);
  if (s1.colors < 8 || s1.nonWhiteFrac < 0.05) fail(`timeline screenshot looks blank: ${JSON.stringify(s1)}`);

  // hover a bucket of the first row (a GPU stream, buckets in the whole-profile view): the zoom
  // replies carry only what drawing needs, the tooltip's count and longest op come from a
  // "bucket" request when hovered ("…" until then)
  {
    const cb = await tl.locator("canvas").boundingBox();
    const tipText = () => tl.locator(".nsys-tl-tip").innerText().catch(() => "");
    let tip = "";
    let seen = 0;
    let asked = false;
    // hover along the row until a bucket with ops in it (its count and longest op come back)
    for (let k = 0; k < 40 && !/^[1-9]\d* ops, /m.test(tip); k++) {
      await page.mouse.move(cb.x + 215 + ((cb.width - 220) * k) / 40, cb.y + 22 + 8);
      await page.waitForTimeout(30);
      tip = await tipText();
      if (!/ ops, /.test(tip)) continue;
      seen++;
      // (a server that ignores `fields` sends every column: nothing to ask for)
      asked ||= tip.includes("…");
      await page.waitForFunction(() => !(document.querySelector(".nsys-tl-tip")?.textContent ?? "…").includes("…"), null,
        { timeout: 30000 });
      tip = await tipText();
    }
    const tipBucket = await tl.evaluate((e) => e.dataset.tipBucket);
    step("bucket tooltip", { tip, bucketsHovered: seen, asked, tipBucket });
    if (seen) {
      if (asked && tipBucket === undefined) fail("bucket tooltip completed without its bucket request");
      if (!/^[1-9]\d* ops, .* busy in .*\nlongest: [^?\n].* \(\d/m.test(tip)) fail(`bucket tooltip incomplete: ${tip}`);
    } else step("bucket tooltip: the first row has no buckets in this view (skipped)", { tip });
    await page.mouse.move(cb.x + 5, cb.y - 40);
  }

  // zoom in with the wheel over the middle of the plot
  const canvas = tl.locator("canvas");
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + 210 + (box.width - 210) * 0.4, box.y + 60);
  const answered0 = Number(before.answered);
  for (let i = 0; i < 3; i++) {
    await page.mouse.wheel(0, -400);
    await page.waitForTimeout(60);
  }
  await page.waitForFunction(
    (n) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.answered) > n && d.answered === d.requests && Number(d.served) >= Number(d.answered) &&
        d.drawnSeq === d.viewSeq;
    },
    answered0,
    { timeout: 30000 },
  );
  await page.waitForTimeout(300);
  const after = await tl.evaluate((e) => ({ ...e.dataset, status: e.querySelector(".nsys-tl-status").textContent }));
  step("zoom answered", after);
  if (Number(after.failed || 0) > 0) fail(`zoom request failed: ${after.status}`);
  // the zoom's range request went out in timeline/range's "columns" format, came back as the
  // server's JSON deflated ("jsonz", the default) or as is ("json"), and the last zoomed
  // view was drawn from that reply
  const wantFormat = /^jsonz?\/columns$/;
  if (!wantFormat.test(after.lastFormat || "")) fail(`zoom reply format ${after.lastFormat}, expected ${wantFormat}`);
  if (after.drawnSeq !== after.viewSeq || Number(after.viewSeq) < 3) fail(`zoomed view not drawn with its data: ${JSON.stringify(after)}`);
  if (!(Number(after.lastInputToDrawMs) > 0)) fail("no input-to-draw measurement for the zoom");
  // one zoom step in each of the other reply layouts, answered in it and drawn
  step("zoom with the other reply layouts", await zoomInOtherLayouts(page, tl, after.lastFormat));
  const res = (s) => /·\s*([\d.]+\s*\S+)\/px/.exec(s)?.[1];
  if (res(after.status) === res(before.status)) fail(`resolution did not change on zoom: ${before.status} -> ${after.status}`);
  const shot2 = await tl.screenshot({ path: path.join(outDir, "timeline-zoomed.png") });
  const s2 = await pngStats(page, shot2);
  step("zoomed screenshot", s2);
  if (s2.colors < 8 || s2.nonWhiteFrac < 0.05) fail(`zoomed screenshot looks blank: ${JSON.stringify(s2)}`);
  if (shot1.equals(shot2)) fail("zoom did not change the picture");
  await checkAxis(page, tl, step);

  // timed zoom steps: one wheel notch each, waiting for its answer
  const trips = [];
  for (let i = 0; i < 10; i++) {
    const n = Number(await tl.evaluate((e) => e.dataset.answered));
    await page.mouse.move(box.x + 210 + (box.width - 210) * (0.3 + 0.04 * i), box.y + 60);
    await page.mouse.wheel(0, i % 3 === 2 ? 300 : -300);
    await page.waitForFunction((k) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.answered) > k && d.answered === d.requests;
    }, n, { timeout: 30000 });
    const d = await tl.evaluate((e) => ({ rt: Number(e.dataset.lastRoundTripMs), py: Number(e.dataset.lastServerMs),
      dec: Number(e.dataset.lastDecodeMs) }));
    trips.push(d);
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  // the same trip with no work on the Python side: the notebook's own messaging cost
  const pings = await tl.evaluate(async (e) => {
    const out = [];
    for (let i = 0; i < 10; i++) out.push((await e.__nsysPing()).ms);
    return out;
  });
  result.zoomRoundTripMs = { p50: med(trips.map((t) => t.rt)), max: Math.max(...trips.map((t) => t.rt)),
    pythonSideP50: med(trips.map((t) => t.py)), browserDecodeP50: med(trips.map((t) => t.dec)), n: trips.length,
    emptyMessageRoundTripP50: med(pings) };
  step("zoom round trips (browser -> kernel -> server -> browser)", result.zoomRoundTripMs);

  // scroll the rows to the bottom: the canvas stays in view and hovering the last row's
  // label names the last track (rows are mapped through the scroll offset)
  {
    const scroller = tl.locator(".nsys-tl-scroll");
    const sc = await scroller.evaluate((e) => {
      e.scrollTop = e.scrollHeight;
      return { top: e.scrollTop, h: e.clientHeight };
    });
    await page.waitForTimeout(200);
    if (sc.top > 0) {
      const cb = await canvas.boundingBox();
      await page.mouse.move(cb.x + 60, cb.y + sc.h - 12);
      await page.waitForTimeout(100);
      const tip = await tl.locator(".nsys-tl-tip").innerText();
      step("scrolled", { scrollTop: sc.top, tip: tip.slice(0, 80) });
      // the label tooltip is "name\ntrack id"; at scrollTop 0 the same point shows an earlier row
      await scroller.evaluate((e) => (e.scrollTop = 0));
      await page.mouse.move(cb.x + 62, cb.y + sc.h - 12);
      await page.waitForTimeout(100);
      const tip0 = await tl.locator(".nsys-tl-tip").innerText();
      if (!/\n\S+:\S+/.test(tip) || tip === tip0) fail(`rows not mapped through the scroll offset: ${tip} / ${tip0}`);
      await scroller.evaluate((e) => (e.scrollTop = e.scrollHeight));
      await page.waitForTimeout(150);
      const sh = await tl.screenshot();
      const st = await pngStats(page, sh);
      if (st.colors < 8 || st.nonWhiteFrac < 0.05) fail(`scrolled timeline looks blank: ${JSON.stringify(st)}`);
    }
    await scroller.evaluate((e) => (e.scrollTop = 0));
    await page.waitForTimeout(200);
  }

  // drag to pan
  const answered1 = Number(after.answered);
  await page.mouse.move(box.x + 700, box.y + 80);
  await page.mouse.down();
  await page.mouse.move(box.x + 500, box.y + 80, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(
    (n) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.answered) > n && d.answered === d.requests;
    },
    answered1,
    { timeout: 30000 },
  );
  step("pan answered", await tl.evaluate((e) => ({ ...e.dataset })));

  // click a kernel on the first GPU row: kernel/details + kernel/explain in the panel
  const cbox = await canvas.boundingBox();
  let clicked = false;
  for (let k = 0; k < 24 && !clicked; k++) {
    await page.mouse.click(cbox.x + 215 + ((cbox.width - 220) * k) / 24, cbox.y + 22 + 8);
    clicked = await tl.evaluate((e) => e.dataset.detailsFor !== undefined);
  }
  if (!clicked) fail("no kernel found to click on the first GPU row");
  await page.waitForFunction(() => {
    const d = document.querySelector(".nsys-tl").dataset;
    return d.detailsShown !== undefined && d.detailsShown === d.detailsFor;
  }, null, { timeout: 30000 });
  const panel = await tl.locator(".nsys-tl-details").innerText();
  step("clicked kernel details", { opId: await tl.evaluate((e) => e.dataset.detailsShown), text: panel.slice(0, 160) });
  if (!/launched by/.test(panel)) fail(`details panel incomplete: ${panel.slice(0, 300)}`);
  await tl.screenshot({ path: path.join(outDir, "timeline-details.png") });

  // -- the NVTX tree ----------------------------------------------------------------
  const tree = page.locator(".nsys-tree").first();
  await tree.waitFor({ state: "visible", timeout: 60000 });
  await page.waitForFunction(() => document.querySelectorAll(".nsys-tree .nsys-tree-row").length > 0, null, { timeout: 60000 });
  const rows0 = await tree.locator(".nsys-tree-row").count();
  // expand the first expandable root, then its first expandable child (each one request)
  await tree.locator(".nsys-tree-toggle", { hasText: "▸" }).first().click();
  await page.waitForFunction((n) => document.querySelectorAll(".nsys-tree .nsys-tree-row").length > n, rows0, { timeout: 30000 });
  const rows1 = await tree.locator(".nsys-tree-row").count();
  const childToggle = tree.locator('.nsys-tree-row[data-depth="1"] .nsys-tree-toggle', { hasText: "▸" }).first();
  let rows2 = rows1;
  if (await childToggle.count()) {
    await childToggle.click();
    await page.waitForFunction((n) => document.querySelectorAll(".nsys-tree .nsys-tree-row").length > n, rows1, { timeout: 30000 });
    rows2 = await tree.locator(".nsys-tree-row").count();
  }
  const errs = await tree.locator(".nsys-tree-err").count();
  step("tree", { total: await tree.evaluate((e) => e.dataset.total), rowsBefore: rows0, afterExpand: rows1, afterSecondExpand: rows2 });
  if (!(rows0 > 0 && rows1 > rows0) || errs) fail("tree did not render or expand");
  await tree.screenshot({ path: path.join(outDir, "tree.png") });

  await page.screenshot({ path: path.join(outDir, "lab.png"), fullPage: false });
  if (widgetErrors.length) fail(`widget errors in the page: ${widgetErrors.join(" | ")}`);
  result.ok = true;
} catch (e) {
  result.error = String(e && e.stack ? e.stack : e);
  console.error(`[lab] FAILED: ${result.error}`);
  try {
    await browser.pages()[0]?.screenshot({ path: path.join(outDir, "failure.png") });
  } catch {}
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  fs.writeFileSync(path.join(outDir, "browser-result.json"), JSON.stringify(result, null, 2));
}
process.exit(result.ok ? 0 : 1);
