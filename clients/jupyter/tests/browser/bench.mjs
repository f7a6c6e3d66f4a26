// The widget zoom benchmark's browser half (driven by ../../bench_widget.py): a real
// JupyterLab (or Notebook 7) page in headless Chromium, the timeline of one profile.
// Each zoom step is one wheel notch over the plot; the widget itself measures, with
// performance.now(), from the wheel event to the end of the frame drawn with the data
// answered for that view (its `samples`). An empty custom-message round trip (ping)
// follows every zoom step, so both share the same load. Writes bench-result.json.
//
// AB="bin,json": the zoom steps alternate between reply layouts (same page, same kernel),
// one whole 22-step in-and-out cycle at a time.
//
//   node bench.mjs URL OUT_DIR ZOOMS BURSTS
import fs from "node:fs";
import path from "node:path";

import { endTrace, launch, seeded } from "./bench_common.mjs";

const [url, outDir, zoomsArg, burstsArg] = process.argv.slice(2);
const ZOOMS = Number(zoomsArg || 60);
const BURSTS = Number(burstsArg || 10);
fs.mkdirSync(outDir, { recursive: true });
const userDataDir = fs.mkdtempSync(path.join(outDir, "chromium-profile-"));
const result = { ok: false };
const log = (s, d = {}) => console.log(`[bench] ${s} ${JSON.stringify(d)}`);

// a fixed pseudo-random sequence (mulberry32), so every run zooms the same way
const rnd = seeded(12345);

const browser = await launch(userDataDir);
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  // bench_widget.py --hops: the page's websocket message events, [sentAt, wall ms, bytes] per widget
  // message (its "sentAt" read from the v1 frame's header parts), joined with the kernel/server trace
  if (process.env.NSYS_AI_WS_TRACE) await page.addInitScript(() => {
    const W = window.WebSocket;
    window.__wsLog = [];
    window.WebSocket = function (...args) {
      const ws = new W(...args);
      ws.addEventListener("message", (e) => {
        const t = performance.timeOrigin + performance.now();
        if (!(e.data instanceof ArrayBuffer)) return;
        const head = new TextDecoder("latin1").decode(new Uint8Array(e.data, 0, Math.min(8192, e.data.byteLength)));
        const m = /"sentAt":\s*([0-9.]+)/.exec(head);
        if (m) window.__wsLog.push([m[1], t, e.data.byteLength]);
      });
      return ws;
    };
    window.WebSocket.prototype = W.prototype;
    Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  });
  page.on("console", (m) => {
    if (m.type() === "error" || m.text().includes("nsys-ai")) console.log(`[browser ${m.type()}] ${m.text()}`);
  });
  page.on("pageerror", (e) => console.log(`[browser pageerror] ${e.message}`));
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 120000 });
  await page.waitForFunction(() => window.jupyterapp && document.querySelector(".jp-Notebook"), null, { timeout: 120000 });
  await page.waitForFunction(() => {
    const w = window.jupyterapp.shell.currentWidget;
    return w?.sessionContext?.session?.kernel?.status === "idle";
  }, null, { timeout: 120000 });
  await page.evaluate(() => window.jupyterapp.commands.execute("notebook:run-all-cells"));
  const tl = page.locator(".nsys-tl").first();
  await tl.waitFor({ state: "visible", timeout: 900000 }); // a 10M profile's first open builds its index
  await page.waitForFunction(() => !!document.querySelector(".nsys-tl")?.dataset.firstDrawn, null,
    { timeout: 300000 });
  const first = await tl.evaluate((e) => ({ ...e.dataset }));
  log("timeline shown", first);
  if (Number(first.failed || 0) > 0) throw new Error("first range request failed");
  const box = await tl.locator("canvas").boundingBox();
  const plotX = (f) => box.x + 210 + (box.width - 210) * f;

  const settled = (seq) =>
    page.waitForFunction((s) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.drawnSeq || 0) >= s && d.answered === d.requests;
    }, seq, { timeout: 60000, polling: "raf" });
  const viewSeq = () => tl.evaluate((e) => Number(e.dataset.viewSeq || 0));
  // after a notch: wait until its view is drawn with its data. One small evaluate that polls in the
  // page each frame (Playwright's waitForFunction, BENCH_HARNESS=playwright, costs the renderer's
  // main thread ~3 ms of DevTools work per step, inside the interval being measured)
  const settleNow = process.env.BENCH_HARNESS === "playwright" ? async () => settled(await viewSeq()) : () =>
    tl.evaluate((e) => new Promise((resolve, reject) => {
      const seq = Number(e.dataset.viewSeq || 0);
      const t0 = performance.now();
      const check = () => {
        const d = e.dataset;
        if (Number(d.drawnSeq || 0) >= seq && d.answered === d.requests) resolve(seq);
        else if (performance.now() - t0 > 60000) reject(new Error(`view ${seq} not drawn in 60 s`));
        else requestAnimationFrame(check);
      };
      check();
    }));
  const ping = (pad) => tl.evaluate((e, n) => e.__nsysPing(n), pad || 0);
  const PAD = Number(process.env.PAD_BYTES || 0); // also a ping answered with PAD bytes (no work) per step
  const padded = [];
  const concurrent = [];

  // zoom in 11 notches (about 700x), out 11, and so on, around random points
  let depth = 0;
  let dir = -1;
  async function notch() {
    if (depth >= 11) dir = 1;
    if (depth <= 0) dir = -1;
    depth -= dir;
    await page.mouse.move(plotX(0.1 + 0.8 * rnd()), box.y + 40 + 30 * rnd());
    await page.keyboard.down("Control"); // Ctrl+wheel zooms (the wheel alone pans)
    await page.mouse.wheel(0, dir * 300);
    await page.keyboard.up("Control");
  }

  for (let i = 0; i < 6; i++) { // warm-up: code paths, caches
    await notch();
    await settleNow();
    await ping();
  }
  const nWarm = await tl.evaluate((e) => e.__nsysSamples.length);
  const pings = [];
  const ab = (process.env.AB || "").split(",").filter(Boolean);
  // BENCH_TRACE=FILE: a Chrome trace (CDP Tracing) of the measured zoom steps, written to FILE
  let cdp = null;
  if (process.env.BENCH_TRACE) {
    cdp = await page.context().newCDPSession(page);
    await cdp.send("Tracing.start", { transferMode: "ReturnAsStream", traceConfig: { includedCategories: [
      "devtools.timeline", "toplevel", "blink", "v8", "cc", "mojom", "ipc", "net", "renderer.scheduler",
      "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.frame", "loading"] } });
  }
  for (let i = 0; i < ZOOMS; i++) {
    // blocks of one whole in-and-out cycle (22 steps) per layout: each sees every zoom level
    if (ab.length) await tl.evaluate((e, w) => e.__nsysSetWire(w), ab[Math.floor(i / 22) % ab.length]);
    await notch();
    // CONCURRENT_PING: an empty ping sent right after the wheel notch, while the zoom is under way
    const cp = process.env.CONCURRENT_PING ? ping() : null;
    await settleNow();
    if (cp) concurrent.push(await cp);
    pings.push(await ping());
    if (PAD) padded.push(await ping(PAD));
  }
  const samples = await tl.evaluate((e, n) => e.__nsysSamples.slice(n), nWarm);
  if (cdp) fs.writeFileSync(process.env.BENCH_TRACE, await endTrace(cdp));
  if (ab.length) await tl.evaluate((e) => e.__nsysSetWire(undefined));

  // bursts: 5 notches 8 ms apart (a fast wheel), then wait; the last notch's view must be drawn
  const bursts = [];
  for (let b = 0; b < BURSTS; b++) {
    const before = await tl.evaluate((e) => ({ n: e.__nsysSamples.length, req: Number(e.dataset.requests) }));
    for (let k = 0; k < 5; k++) {
      await notch();
      await page.waitForTimeout(8);
    }
    const last = await viewSeq();
    await settled(last);
    const after = await tl.evaluate((e, n) => ({ s: e.__nsysSamples.slice(n), req: Number(e.dataset.requests) }), before.n);
    const lastSample = after.s.find((s) => s.seq === last);
    if (!lastSample) throw new Error(`burst ${b}: the last view (${last}) was never drawn with its data`);
    bursts.push({ lastInputToDrawMs: lastSample.inputToDrawMs, requests: after.req - before.req });
  }
  // search (SEARCH=query, default "gemm"): Enter in the search box -> the first match's counter
  // (3 times), then 40 Enter / Shift+Enter steps, each timed by the widget (search box steps)
  const searchFirst = [];
  const query = process.env.SEARCH || "gemm";
  for (let i = 0; i < 3; i++) {
    await tl.locator(".nsys-tl-search input").fill(i % 2 ? `${query}*` : query);
    await tl.evaluate((e) => { e.querySelector(".nsys-tl-search").dataset.counter = ""; });
    const t0 = Date.now();
    await tl.locator(".nsys-tl-search input").press("Enter");
    await page.waitForFunction(() => / of |^no matches/.test(document.querySelector(".nsys-tl-search").dataset.counter || ""),
      null, { timeout: 120000, polling: 5 });
    searchFirst.push(Date.now() - t0);
  }
  for (let i = 0; i < 40; i++) {
    await tl.locator(".nsys-tl-search input").press(i % 10 === 9 ? "Shift+Enter" : "Enter");
    await page.waitForTimeout(20);
  }
  await page.waitForFunction(() => document.querySelector(".nsys-tl").__nsysNav.steps.length >= 40, null, { timeout: 60000 });
  const searchSteps = await tl.evaluate((e) => [...e.__nsysNav.steps]);
  log("search", { first: searchFirst, steps: searchSteps.length });
  const end = await tl.evaluate((e) => ({ ...e.dataset }));
  if (Number(end.failed || 0) > 0) throw new Error(`${end.failed} range request(s) failed`);
  await tl.screenshot({ path: path.join(outDir, "bench-timeline.png") });
  if (process.env.NSYS_AI_WS_TRACE) result.wsLog = await page.evaluate(() => window.__wsLog);
  Object.assign(result, { ok: true, samples, pings, padded, concurrent, bursts, searchFirst, searchSteps, final: end });
} catch (e) {
  result.error = String(e && e.stack ? e.stack : e);
  console.error(`[bench] FAILED: ${result.error}`);
  try {
    await browser.pages()[0]?.screenshot({ path: path.join(outDir, "bench-failure.png") });
  } catch {}
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  fs.writeFileSync(path.join(outDir, "bench-result.json"), JSON.stringify(result, null, 1));
}
process.exit(result.ok ? 0 : 1);
