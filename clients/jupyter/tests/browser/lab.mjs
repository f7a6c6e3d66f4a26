// Drives a real JupyterLab in headless Chromium (Debian's, via playwright-core):
// runs the widget notebook, checks the timeline and the NVTX tree render, zooms
// with the mouse wheel and checks that the zoom's `timeline/range` request was
// answered by the Python side. Writes screenshots and a JSON summary to OUT.
//
// With EPOCH_PROFILE (the notebook's last cell shows it, its output area hidden): the widget
// rendered hidden asks nothing until shown, then draws every row in view, also after its view
// grows taller; on that epoch clock a 10 ns window draws a kernel at its pixel and its details
// print SQL's start and end digit for digit.
//
//   node lab.mjs URL OUT_DIR [EPOCH_PROFILE]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { checkAxis, pngStats, zoomInOtherLayouts } from "./timeline_checks.mjs";
import { checkNavigation } from "./nav_checks.mjs";
import { checkToolbarOneLine } from "./toolbar_check.mjs";
import { checkBucketClick, checkDrawsBeforeReply, checkFirstFrame, checkSecondWidgetNoRequest } from "./immediate_checks.mjs";
import { checkHeldData } from "./held_checks.mjs";
import { checkNoLayoutReadsAfterWrites } from "./layout_reads_check.mjs";

// playwright-core lives in clients/jupyter/js/node_modules (NODE_MODULES_DIR)
const require = createRequire(path.join(process.env.NODE_MODULES_DIR, "noop.js"));
const { chromium } = require("playwright-core");

const [url, outDir, epochProfile] = process.argv.slice(2);
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
  await page.addInitScript(() => {
    window.lastCell = () => {
      const nb = window.jupyterapp.shell.currentWidget.content;
      return nb.widgets[nb.widgets.length - 1];
    };
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
  // the epoch cell's output area hidden (display: none): its widget renders with no size
  // (checkHiddenEpochWidget shows it)
  if (epochProfile) {
    await page.addStyleTag({ content: ".nsys-test-hidden .jp-Cell-outputWrapper { display: none !important; }" });
    await page.evaluate(() => lastCell().node.classList.add("nsys-test-hidden"));
  }
  await page.evaluate(() => window.jupyterapp.commands.execute("notebook:run-all-cells"));
  step("run all cells");

  // -- the timeline ---------------------------------------------------------------
  const tl = page.locator(".nsys-tl").first();
  await tl.waitFor({ state: "visible", timeout: 120000 });
  await page.waitForFunction(() => { // the first complete frame (from the data sent with the widget, or a reply)
    const d = document.querySelector(".nsys-tl")?.dataset;
    return !!d?.firstDrawn && d.answered === d.requests;
  }, null,
    { timeout: 60000 });
  await page.waitForTimeout(300); // let the frame paint
  const before = await tl.evaluate((e) => ({ ...e.dataset, status: e.querySelector(".nsys-tl-status").textContent }));
  step("timeline first frame drawn", before);
  await checkFirstFrame(page, tl, step);
  if (Number(before.failed || 0) > 0) fail(`range request failed: ${before.status}`);
  const shot1 = await tl.screenshot({ path: path.join(outDir, "timeline.png") });
  const s1 = await pngStats(page, shot1);
  step("timeline screenshot", s1);
  if (s1.colors < 8 || s1.nonWhiteFrac < 0.05) fail(`timeline screenshot looks blank: ${JSON.stringify(s1)}`);

  // hover a bucket of the first row (a GPU stream, buckets in the whole-profile view): the zoom
  // replies carry only what drawing needs, the tooltip's count and longest op come from a
  // "bucket" request when hovered ("…" until then)
  {
    // the fallback when the view's bucket columns are not held (held_checks.mjs checks them)
    await tl.evaluate((e) => e.__nsysNav.bucketCols(false));
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
    // the bucket request leaves with the pointermove that reaches a bucket (not after a rest), and a
    // sweep (40 moves 10 ms apart, dispatched in the page) asks one at a time, fewer than the moves,
    // the last bucket hovered completed when the sweep stops
    await page.mouse.move(cb.x + 5, cb.y - 40);
    await page.waitForTimeout(500); // no tooltip request in flight
    const atOnce = await tl.evaluate((e) => {
      const c = e.querySelector("canvas"), b = c.getBoundingClientRect();
      for (let k = 0; k < 40; k++) {
        const asks0 = Number(e.dataset.tipAsks || 0);
        c.dispatchEvent(new PointerEvent("pointermove", { clientX: b.left + 215 + ((b.width - 220) * (k + 0.5)) / 40,
          clientY: b.top + 22 + 8, bubbles: true }));
        if ((e.dataset.tipShown || "").endsWith("|0")) return { k, askedAtOnce: Number(e.dataset.tipAsks || 0) > asks0 };
      }
      return null;
    });
    const moves = 40;
    const asks0 = Number(await tl.evaluate((e) => e.dataset.tipAsks || 0));
    const last = await tl.evaluate(async (e, moves) => {
      const c = e.querySelector("canvas"), b = c.getBoundingClientRect();
      for (let k = 0; k < moves; k++) {
        c.dispatchEvent(new PointerEvent("pointermove", { clientX: b.left + 215 + ((b.width - 220) * (k + 0.25)) / moves,
          clientY: b.top + 22 + 8, bubbles: true }));
        await new Promise((res) => setTimeout(res, 10));
      }
      return (e.dataset.tipShown || "").replace(/\|[01]$/, "");
    }, moves);
    if (last) await page.waitForFunction((k) => document.querySelector(".nsys-tl").dataset.tipShown === `${k}|1`, last, { timeout: 30000 });
    const asks = Number(await tl.evaluate((e) => e.dataset.tipAsks || 0)) - asks0;
    step("tooltip at once, sweep", { atOnce, moves, asks, last });
    if (seen && !atOnce?.askedAtOnce) fail(`a bucket's tooltip request did not leave with the pointermove: ${JSON.stringify(atOnce)}`);
    if (asks >= moves) fail(`a sweep of ${moves} moves sent ${asks} bucket requests (one at a time expected)`);
    await page.mouse.move(cb.x + 5, cb.y - 40);
    await tl.evaluate((e) => e.__nsysNav.bucketCols(true));
  }

  // zoom in with the wheel over the middle of the plot
  const canvas = tl.locator("canvas");
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + 210 + (box.width - 210) * 0.4, box.y + 60);
  const answered0 = Number(before.answered);
  for (let i = 0; i < 3; i++) {
    await page.keyboard.down("Control"); // Ctrl+wheel zooms (the wheel alone pans)
    await page.mouse.wheel(0, -400);
    await page.keyboard.up("Control");
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
    await page.keyboard.down("Control"); // Ctrl+wheel zooms (the wheel alone pans)
    await page.mouse.wheel(0, i % 3 === 2 ? 300 : -300);
    await page.keyboard.up("Control");
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
    // a bucket's op is known with its reply (detailsFor "?" until then; none: an empty bucket)
    await page.waitForFunction((e) => e.dataset.detailsFor !== "?", await tl.elementHandle(), { timeout: 30000 });
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
  // the explanation (kernel/explain, asked beside the details) follows below them
  await page.waitForFunction(() => {
    const d = document.querySelector(".nsys-tl").dataset;
    return d.explained !== undefined && d.explained === d.detailsShown;
  }, null, { timeout: 60000 });
  const explanation = await tl.locator(".nsys-tl-details .nsys-tl-explain").innerText();
  const panel2 = await tl.locator(".nsys-tl-details").innerText();
  step("kernel explanation", { text: explanation.slice(0, 160) });
  if (explanation.length < 40 || /explaining/.test(explanation) || !/launched by/.test(panel2)) {
    fail(`explanation not shown below the details: ${panel2.slice(0, 400)}`);
  }
  await tl.screenshot({ path: path.join(outDir, "timeline-details.png") });

  await checkFlow(page, tl);
  await checkDrawsBeforeReply(page, tl, step);
  await tl.evaluate((e) => e.__nsysNav.bucketCols(false)); // a bucket not answered yet (the fallback)
  await checkBucketClick(page, tl, step);
  await tl.evaluate((e) => e.__nsysNav.bucketCols(true));
  await checkHeldData(page, tl, step);
  await checkTrackTree(page, tl);
  await checkNavigation(page, tl, step, (name) => path.join(outDir, `timeline-${name}.png`));
  await checkToolbarOneLine(tl, step);
  await checkNoLayoutReadsAfterWrites(page, tl, step);

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
  if (epochProfile) await checkHiddenEpochWidget(page);
  await checkSecondWidgetNoRequest(page, step, rowsDrawn);
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

/** Rows of an SQL query on the epoch profile, as decimal strings (Python's sqlite3: exact). */
function sql(query) {
  const py = "import json,sqlite3,sys\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True)\n" +
    "print(json.dumps([[str(x) for x in r] for r in c.execute(sys.argv[2])]))";
  return JSON.parse(execFileSync("python3", ["-c", py, epochProfile, query], { encoding: "utf8" }));
}

/** Per row in view that draws (open process and thread rows are labels), whether the plot part
 *  of the widget's canvas has anything drawn on it (a pixel other than the row's background). */
async function rowsDrawn(tl) {
  return tl.evaluate((e) => {
    const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
    const top = e.querySelector(".nsys-tl-scroll").scrollTop, rows = e.__nsysRows();
    const out = [];
    for (let i = Math.ceil(top / 16); 22 + (i + 1) * 16 - top <= c.height / dpr && i < rows.length; i++) {
      const y = Math.round((22 + i * 16 - top + 8) * dpr);
      const d = g.getImageData(Math.round(212 * dpr), y, c.width - Math.round(212 * dpr), 1).data;
      const bg = [d[0], d[1], d[2], d[3]].join();
      let drawn = false;
      for (let k = 0; k < d.length && !drawn; k += 4) drawn = [d[k], d[k + 1], d[k + 2], d[k + 3]].join() !== bg;
      // the row's background is its first pixel unless that is drawn too: compare with the label gutter
      const gutter = Array.from(g.getImageData(Math.round(206 * dpr), y, 1, 1).data).join();
      // an open process or thread row is a label only (its rows below draw)
      if (!/^(proc|thread):/.test(rows[i])) out.push({ id: rows[i], drawn: drawn || bg !== gutter });
    }
    return out;
  });
}

async function checkHiddenEpochWidget(page) {
  const tl = page.locator(".nsys-tl").nth(1);
  await page.waitForFunction(() => document.querySelectorAll(".nsys-tl").length >= 2, null, { timeout: 120000 });
  await page.waitForTimeout(1000); // time to ask for data, if it were going to while hidden
  const hidden = await tl.evaluate((e) => ({ width: e.clientWidth, requests: Number(e.dataset.requests || 0) }));
  step("epoch widget rendered hidden", hidden);
  if (hidden.width !== 0) fail(`the collapsed output is not hidden: ${JSON.stringify(hidden)}`);
  if (hidden.requests !== 0) fail(`a hidden widget asked for ${hidden.requests} ranges (nothing shown to fetch for)`);
  await page.evaluate(() => lastCell().node.classList.remove("nsys-test-hidden"));
  await tl.scrollIntoViewIfNeeded();
  const settled = async () => page.waitForFunction((el) => {
    const d = el.dataset;
    return !!d.firstDrawn && d.answered === d.requests && Number(d.drawnSeq || 0) >= Number(d.viewSeq || 0);
  }, await tl.elementHandle(), { timeout: 60000 });
  await settled();
  await page.waitForTimeout(300);
  const shown = await rowsDrawn(tl);
  step("epoch widget shown: rows drawn", { rows: shown.length, blank: shown.filter((r) => !r.drawn).map((r) => r.id) });
  if (!shown.length || shown.some((r) => !r.drawn)) fail(`blank rows once shown: ${JSON.stringify(shown)}`);
  // a zoom while the output is short (the rows below not in view, not asked for), then the view
  // grows: the rows that come into view must be fetched, not left blank until the next zoom
  const scroller = tl.locator(".nsys-tl-scroll");
  await scroller.evaluate((e) => { e.style.maxHeight = "60px"; });
  await page.waitForTimeout(200);
  await tl.locator('button[title^="zoom in"]').click();
  await settled();
  await scroller.evaluate((e) => { e.style.maxHeight = "300px"; });
  await page.waitForTimeout(300);
  await settled();
  await page.waitForTimeout(300);
  const grown = await rowsDrawn(tl);
  await tl.screenshot({ path: path.join(outDir, "epoch-shown.png") });
  step("epoch widget grown taller: rows drawn", { rows: grown.length, blank: grown.filter((r) => !r.drawn).map((r) => r.id) });
  if (grown.length < 6 || grown.some((r) => !r.drawn)) fail(`blank rows after the view grew: ${JSON.stringify(grown)}`);

  // exact times: a kernel whose start a double would move by >= 64 ns, nothing before it on its stream
  const [k] = sql(`SELECT k.start, k.end, k.deviceId, k.streamId FROM CUPTI_ACTIVITY_KIND_KERNEL k
    WHERE k.end - k.start > 50 AND k.start % 256 BETWEEN 64 AND 192
      AND NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL j WHERE j.deviceId = k.deviceId AND j.streamId = k.streamId
                      AND j.rowid <> k.rowid AND j.end >= k.start - 50 AND j.start <= k.start)
    ORDER BY k.start LIMIT 1 OFFSET 5`);
  if (!k) fail("no suitable kernel in the epoch profile");
  const [start, end, dev, stream] = k;
  const rows = await tl.evaluate((e) => e.__nsysRows());
  const row = rows.findIndex((id) => id === `gpu:${dev}:${stream}` || id.startsWith(`gpu:${dev}:${stream}:`));
  if (row < 0) fail(`no row for GPU ${dev} stream ${stream}`);
  await scroller.evaluate((e, y) => { e.scrollTop = y; }, Math.max(0, (row - 2) * 16));
  const top = await scroller.evaluate((e) => e.scrollTop);
  const lo = (BigInt(start) - 5n).toString(), hi = (BigInt(start) + 5n).toString();
  await tl.evaluate((e, [a, b]) => e.__nsysShow(a, b), [lo, hi]);
  await settled();
  await page.waitForTimeout(300);
  const width = await tl.evaluate((e) => e.querySelector("canvas").getBoundingClientRect().width);
  const xk = 210 + (width - 210) / 2, y = 22 + row * 16 - top + 3; // the top of the bar, above its name
  const px = await tl.evaluate((e, [yy, xs]) => {
    const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
    return xs.map((x) => Array.from(g.getImageData(Math.round(x * dpr), Math.round(yy * dpr), 1, 1).data).join());
  }, [y, [215, xk - 15, xk + 15, width - 10]]);
  await tl.screenshot({ path: path.join(outDir, "epoch-10ns.png") });
  step("epoch 10 ns window", { start, row, pixels: px, axis: JSON.parse(await tl.evaluate((e) => e.dataset.axis)) });
  if (px[1] !== px[0]) fail(`before the kernel's start the row is not empty: ${px}`);
  if (px[2] === px[1] || px[2] !== px[3]) fail(`the kernel is not drawn from its start on: ${px}`);
  const box = await tl.locator("canvas").boundingBox();
  await page.mouse.click(box.x + xk + 15, box.y + y);
  await page.waitForFunction((el) => el.dataset.detailsShown !== undefined && el.dataset.detailsShown === el.dataset.detailsFor,
    await tl.elementHandle(), { timeout: 30000 });
  const panel = await tl.locator(".nsys-tl-details").innerText();
  step("epoch kernel details", { text: panel.slice(0, 200) });
  if (!panel.includes(`start ${start} ns`) || !panel.includes(`end ${end} ns`)) fail(`details do not print ${start}..${end}: ${panel.slice(0, 300)}`);
}

/** The track tree (clients/vscode/src/client/trackTree.ts): GPU › utilisation › streams, process › thread › NVTX (stacked,
 *  expandable) and CUDA API rows; a label click collapses, Alt+click hides, Shift+click pins, the
 *  label column's edge drags; the legend. Asserts on the pixels drawn per row. */
async function checkTrackTree(page, tl) {
  const scroller = tl.locator(".nsys-tl-scroll");
  const rows = () => tl.evaluate((e) => e.__nsysRows());
  const settled = async () => {
    await page.waitForFunction((e) => e.dataset.answered === e.dataset.requests, await tl.elementHandle(), { timeout: 30000 });
    await page.waitForTimeout(250);
  };
  const drawnRow = async (key) => (await rowsDrawn(tl)).find((r) => r.id === key)?.drawn;
  const clickLabel = async (key, modifier) => {
    const i = (await rows()).indexOf(key);
    await scroller.evaluate((e, y) => { e.scrollTop = y; }, Math.max(0, (i - 2) * 16));
    const top = await scroller.evaluate((e) => e.scrollTop);
    const box = await tl.locator("canvas").boundingBox();
    if (modifier) await page.keyboard.down(modifier);
    await page.mouse.click(box.x + 60, box.y + 22 + i * 16 - top + 8);
    if (modifier) await page.keyboard.up(modifier);
    await settled();
  };
  await scroller.evaluate((e) => { e.scrollTop = 0; });
  await settled();
  let ids = await rows();
  const proc = ids.findIndex((k) => k.startsWith("proc:")), api = ids.findIndex((k) => k.startsWith("api:"));
  const nvtx = ids.findIndex((k) => k.startsWith("nvtx:"));
  if (ids[0] !== "gpu:0" || !ids[1].startsWith("gpu:0:") || !(proc > 0 && ids[proc + 1].startsWith("thread:") && nvtx > proc && api > nvtx))
    fail(`track tree order: ${ids.join(" ")}`);
  if (!(await drawnRow("gpu:0"))) fail("the utilisation row is blank");
  await scroller.evaluate((e, y) => { e.scrollTop = y; }, Math.max(0, (api - 3) * 16));
  await settled();
  if (!(await drawnRow(ids[api])) || !(await drawnRow(ids[nvtx]))) fail("the CUDA API or NVTX row is blank");
  const n0 = ids.length;
  await clickLabel(ids[nvtx]);
  ids = await rows();
  if (!(ids.length > n0 && ids[nvtx + 1].startsWith("nvtx:"))) fail(`NVTX did not expand: ${ids.join(" ")}`);
  if (!(await drawnRow(ids[nvtx + 1]))) fail("an expanded NVTX depth row is blank");
  await clickLabel(ids[nvtx]);
  await clickLabel("gpu:0");
  ids = await rows();
  if (ids.some((k) => k.startsWith("gpu:0:"))) fail("GPU 0 did not collapse");
  if (!(await drawnRow("gpu:0"))) fail("a collapsed GPU row is blank");
  await clickLabel("gpu:0");
  ids = await rows();
  const victim = ids[2];
  await clickLabel(victim, "Alt");
  if ((await rows()).includes(victim)) fail("Alt+click did not hide the row");
  await tl.locator(".nsys-tl-unhide").click();
  await settled();
  if (!(await rows()).includes(victim)) fail("show hidden did not bring it back");
  const apiKey = ids.find((k) => k.startsWith("api:"));
  await clickLabel(apiKey, "Shift");
  await scroller.evaluate((e) => { e.scrollTop = 0; });
  await settled();
  if ((await rows())[0] !== apiKey || !(await drawnRow(apiKey))) fail("the pinned row is not first and drawn");
  await clickLabel(apiKey, "Shift");
  const legend = await tl.locator(".nsys-tl-legend-item").allInnerTexts();
  if (legend.join("|") !== "kernel|NCCL|memcpy|memset|NVTX|CUDA API") fail(`legend: ${legend.join("|")}`);
  const box = await tl.locator("canvas").boundingBox();
  await page.mouse.move(box.x + 207, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 280, box.y + 100, { steps: 4 });
  await page.mouse.up();
  const lw = Number(await tl.evaluate((e) => e.dataset.labelWidth));
  if (!(lw > 260 && lw < 300)) fail(`label column ${lw} px after the drag`);
  await tl.screenshot({ path: path.join(outDir, "track-tree.png") });
  step("track tree", { rows: (await rows()).length, legend, labelWidth: lw });
}

/** Launch <-> kernel: the clicked kernel's flow (its API call outlined, the arrow drawn across the
 *  rows between), then a click on that API call lists the kernel among the ops it launched. */
async function checkFlow(page, tl) {
  await page.waitForFunction((e) => e.dataset.flow, await tl.elementHandle(), { timeout: 30000 });
  const flow = JSON.parse(await tl.evaluate((e) => e.dataset.flow));
  const origin = BigInt(await tl.evaluate((e) => e.dataset.origin));
  const op = flow.ops[0], pad = 200000;
  const v0 = flow.api.start - pad, v1 = op.end + pad;
  await tl.locator(".nsys-tl-scroll").evaluate((e) => { e.scrollTop = 0; });
  await tl.evaluate((e, [a, b]) => e.__nsysShow(a, b), [String(origin + BigInt(v0)), String(origin + BigInt(v1))]);
  await page.waitForFunction((e) => e.dataset.answered === e.dataset.requests && Number(e.dataset.drawnSeq || 0) >= Number(e.dataset.viewSeq || 0),
    await tl.elementHandle(), { timeout: 30000 });
  await page.waitForTimeout(300);
  const rows = await tl.evaluate((e) => e.__nsysRows());
  const apiRow = rows.indexOf(flow.api.track), kRow = rows.indexOf(op.track);
  if (!(kRow >= 0 && apiRow > kRow)) fail(`flow rows ${kRow} ${apiRow}: ${JSON.stringify(flow)}`);
  const marks = await tl.evaluate((e) => {
    const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
    const out = [];
    for (let i = 0; 22 + (i + 1) * 16 <= c.height / dpr; i++) {
      const d = g.getImageData(Math.round(210 * dpr), Math.round((22 + i * 16) * dpr), c.width - Math.round(210 * dpr), Math.round(16 * dpr)).data;
      let n = 0;
      for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k] - 255) + d[k + 1] + Math.abs(d[k + 2] - 200) < 60) n++;
      out.push(n);
    }
    return out;
  });
  await tl.screenshot({ path: path.join(outDir, "flow-kernel.png") });
  step("flow from the clicked kernel's API call", { api: flow.api, op, marks });
  if (!(marks[apiRow] > 10 && marks[kRow] > 10)) fail(`the call or the kernel is not outlined: ${marks}`);
  for (let i = kRow + 1; i < apiRow; i++) if (!(marks[i] > 0)) fail(`the arrow does not cross row ${i}: ${marks}`);
  const box = await tl.locator("canvas").boundingBox();
  const x = 210 + (((flow.api.start + flow.api.end) / 2 - v0) / (v1 - v0)) * (box.width - 210);
  await page.mouse.click(box.x + x, box.y + 22 + apiRow * 16 + 8);
  await page.waitForFunction(([e, id]) => {
    const f = e.dataset.flow && JSON.parse(e.dataset.flow);
    return f && f.ops.length && f.ops.every((o) => o.id !== id || true) && f.ops.some((o) => o.id === id) && !e.dataset.detailsFor;
  }, [await tl.elementHandle(), op.id], { timeout: 30000 });
  const back = JSON.parse(await tl.evaluate((e) => e.dataset.flow));
  step("the API call's launched ops", back);
  if (back.api.id !== flow.api.id) fail(`clicked call ${back.api.id}, expected ${flow.api.id}`);
  await tl.screenshot({ path: path.join(outDir, "flow-api.png") });
}
