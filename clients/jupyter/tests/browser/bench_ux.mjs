// The timeline's first frame and interactions, measured in a real JupyterLab (or Notebook 7) page
// in headless Chromium (driven by ../../bench_widget_ux.py).
//
//   node bench_ux.mjs URL OUT_DIR first RUNS      the first frame: cells 0-4 of the notebook
//   node bench_ux.mjs URL OUT_DIR interact ROUNDS interactions on the widget of cell 0
//
// "first": per run the kernel is restarted and the outputs cleared, then cell 0 (`import
// nsys_ai_native`, for a cold run with a fresh NSYS_AI_CACHE_DIR), cell 1
// (`nsys_ai_native.open(P).show()`) and, cached, cell 2 (`p = open(P)`) and cell 3 (`p.show()`). One clock: wall-clock ms (performance.timeOrigin + now() in the page, time.time()
// in the kernel, same machine): from just before the cell's execute request to the end of the
// widget's first complete frame (every visible row drawn from data answered for that view at
// that width: data-first-drawn), with the stages in between (the widget's data-first-* stamps and
// the Python side's _stamps).
//
// "interact": each input is sent by Playwright (real input events); the page records the event's
// timeStamp (capture phase on window) and the time the widget's DOM shows the result (a
// MutationObserver on the widget: a view drawn with its data, the rows drawn complete, the tooltip
// completed, the details panel filled, the area selection's analyses shown). Writes bench-ux.json.
import fs from "node:fs";
import path from "node:path";

import { endTrace, launch, seeded } from "./bench_common.mjs";

const [url, outDir, mode, nArg] = process.argv.slice(2);
const N = Number(nArg || 5);
fs.mkdirSync(outDir, { recursive: true });
const userDataDir = fs.mkdtempSync(path.join(outDir, "chromium-profile-"));
const result = { ok: false, mode };
const log = (s, d = {}) => console.log(`[bench-ux] ${s} ${JSON.stringify(d)}`);

const rnd = seeded(4242);

const browser = await launch(userDataDir);
const page = browser.pages()[0] ?? (await browser.newPage());
page.on("console", (m) => {
  if (m.type() === "error" || m.text().includes("nsys-ai")) console.log(`[browser ${m.type()}] ${m.text()}`);
});
page.on("pageerror", (e) => console.log(`[browser pageerror] ${e.message}`));

const idle = () => page.waitForFunction(() => {
  const w = window.jupyterapp?.shell?.currentWidget;
  return w?.sessionContext?.session?.kernel?.status === "idle";
}, null, { timeout: 300000, polling: 100 });

/** The restarted kernel answers: connected, idle, and a trivial execution done (a cell run while the
 *  restart is still settling can be lost). */
const ready = async () => {
  await page.waitForFunction(() => {
    const k = window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel;
    return k?.status === "idle" && k?.connectionStatus === "connected";
  }, null, { timeout: 300000, polling: 100 });
  await page.evaluate(() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.requestExecute({ code: "1" }).done);
  await idle();
};

/** Runs cell i; resolves with the wall-clock ms just before its execute request (after it ran). */
const runCell = (i) => page.evaluate(async (i) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = i;
  const t0 = performance.timeOrigin + performance.now();
  await window.jupyterapp.commands.execute("notebook:run-cell");
  return t0;
}, i);

/** The first-frame stamps of the widget in cell i, relative to t0 (ms). */
const firstFrame = async (i, t0) => {
  await page.waitForFunction((i) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    return !!nb.widgets[i].node.querySelector(".nsys-tl")?.dataset.firstDrawn;
  }, i, { timeout: 600000, polling: 50 });
  return page.evaluate(([i, t0]) => {
    const e = window.jupyterapp.shell.currentWidget.content.widgets[i].node.querySelector(".nsys-tl");
    const d = e.dataset;
    const py = JSON.parse(d.pyStamps || "{}");
    const rel = (v) => (v === undefined || v === null || v === "" ? null : Math.round((Number(v) - t0) * 10) / 10);
    return { open: rel(py.open), opened: rel(py.opened), show: rel(py.show), tracks: rel(py.tracks), first: rel(py.first),
      module: rel(d.firstModule), render: rel(d.firstRender), initial: rel(d.firstInitial), layout: rel(d.firstLayout), sent: rel(d.firstSent), decoded: rel(d.firstDecoded),
      drawn: rel(d.firstDrawn), failed: Number(d.failed || 0) };
  }, [i, t0]);
};

async function first() {
  // variants (VARIANTS, comma-separated): "cached" / "cold" index, "-nopreload": the widget module
  // not imported in the background (NSYS_AI_WIDGET_PRELOAD=0), the comparison
  const variants = (process.env.VARIANTS || "cached,cold,cached-nopreload,cold-nopreload").split(",");
  const runs = [];
  for (let r = -1; r < N * variants.length; r++) { // r = -1: a warm-up (cached), not counted
    const variant = r < 0 ? "cached" : variants[r % variants.length];
    const cold = variant.startsWith("cold");
    await idle();
    await page.evaluate(() => window.jupyterapp.commands.execute("notebook:clear-all-cell-outputs"));
    await page.evaluate(() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart());
    await ready();
    await page.evaluate(([cold, preload, first, firstz, before]) => {
      const src = "import os, sys, tempfile\n" +
        // "@before": the client of another checkout (bench_widget_ux.py --before), the comparison
        (before ? "sys.path.insert(0, os.environ['BENCH_BEFORE'])\n" : "") +
        (cold ? "os.environ['NSYS_AI_CACHE_DIR'] = tempfile.mkdtemp(dir=os.environ['BENCH_COLD_ROOT'])\n" : "") +
        `os.environ['NSYS_AI_WIDGET_PRELOAD'] = '${preload ? 1 : 0}'\nos.environ['NSYS_AI_WIDGET_FIRST'] = '${first ? 1 : 0}'\n` +
        (firstz ? "os.environ['NSYS_AI_WIDGET_FIRST_WIRE'] = 'jsonz'\n" : "") +
        "import nsys_ai_native";
      window.jupyterapp.shell.currentWidget.content.widgets[0].model.sharedModel.setSource(src);
    }, [cold, !variant.includes("nopreload"), !variant.includes("nofirst"), variant.includes("firstz"), variant.includes("@before")]);
    await runCell(0);
    const t0 = await runCell(1);
    const openShow = await firstFrame(1, t0);
    const run = { variant, cold, openShow };
    if (!cold) {
      await runCell(2);
      const t1 = await runCell(3);
      run.show = await firstFrame(3, t1);
      // JupyterLab's own floor: a trivial anywidget (its class defined in cell 4) shown by cell 5
      // the same way, from the execute request to its first frame after render
      await runCell(4);
      const t2 = await runCell(5);
      const floor = await page.waitForFunction(() => {
        const e = window.jupyterapp.shell.currentWidget.content.widgets[5].node.querySelector(".nsys-floor");
        return e?.dataset.drawn ? { render: Number(e.dataset.render), drawn: Number(e.dataset.drawn), module: Number(e.dataset.module) } : null;
      }, null, { timeout: 120000, polling: 20 }).then((h) => h.jsonValue());
      run.floor = { module: Math.round((floor.module - t2) * 10) / 10, render: Math.round((floor.render - t2) * 10) / 10,
        drawn: Math.round((floor.drawn - t2) * 10) / 10 };
    }
    log(r < 0 ? "warm-up" : "run", run);
    if (r >= 0) runs.push(run);
  }
  result.runs = runs;
}

async function interact() {
  await idle();
  await page.evaluate(() => window.jupyterapp.commands.execute("notebook:run-all-cells"));
  const tl = page.locator(".nsys-tl").first();
  await tl.waitFor({ state: "visible", timeout: 900000 });
  await page.waitForFunction(() => !!document.querySelector(".nsys-tl")?.dataset.firstDrawn, null, { timeout: 900000 });
  const canvas = tl.locator("canvas");
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const labelW = Number(await tl.evaluate((e) => e.dataset.labelWidth || 210));
  const plotX = (f) => box.x + labelW + (box.width - labelW) * f;
  const rowY = (i, top) => box.y + 22 + i * 16 - top + 8;
  await page.evaluate(() => {
    const e = document.querySelector(".nsys-tl");
    const last = {};
    // how late each input reached the page's first listener (its dispatch, after its timeStamp)
    const lag = {};
    for (const t of ["wheel", "pointerdown", "pointermove", "pointerup", "keydown", "click"]) {
      window.addEventListener(t, (ev) => { last[t] = ev.timeStamp; lag[t] = performance.now() - ev.timeStamp; }, true);
    }
    // long tasks (>= 50 ms on the main thread): the ones that overlapped a measurement
    const longTasks = [];
    try {
      new PerformanceObserver((l) => { for (const x of l.getEntries()) longTasks.push([x.startTime, x.duration]); })
        .observe({ type: "longtask", buffered: false });
    } catch { /* no long task timing */ }
    const d = e.dataset;
    const nav = e.__nsysNav;
    const viewDrawn = (seq0) => () => nav.seq() > seq0 && Number(d.drawnSeq || 0) >= nav.seq() && d.answered === d.requests;
    // a view change's first frame showing it (drawn from the data already there)
    const viewShown = (seq0) => () => nav.seq() > seq0 && Number((d.painted || "0:0:0").split(":")[2]) >= nav.seq();
    // a click's details panel showing the op: its first lines drawn from the data the page holds
    // (data-details-first, before the reply) or the whole reply
    const detailsFirst = () => { delete d.detailsFirst; return () => (d.detailsFirst !== undefined && d.detailsFirst === d.detailsFor) ||
      (!!d.detailsShown && d.detailsShown === d.detailsFor); };
    const early = { view: () => viewShown(nav.seq()), details: detailsFirst };
    const conds = {
      view: () => viewDrawn(nav.seq()),
      rows: () => { const n0 = nav.rows().length; return () => nav.rows().length !== n0 && d.painted === `${nav.rows().length}:1:${nav.seq()}`; },
      tip: () => { delete d.tipShown; return () => !!d.tipShown?.endsWith("|1") && e.querySelector(".nsys-tl-tip").style.display === "block"; },
      details: () => { delete d.detailsShown; delete d.detailsFor; return () => !!d.detailsShown && d.detailsShown === d.detailsFor; },
      area: () => { const b = e.querySelector(".nsys-tl-range"); delete b.dataset.loaded; return () => b.dataset.loaded === "true"; },
    };
    // arms a measurement: resolves with (DOM shows it) - (the last `startType` event's timeStamp)
    window.__uxArm = (kind, startType, timeoutMs) => {
      window.__uxArmedWall = performance.timeOrigin + performance.now();
      const cond = conds[kind]();
      const shown = early[kind]?.();
      let shownMs = null;
      window.__uxPending = new Promise((resolve) => {
        let done = false;
        const finish = (v) => {
          if (done) return;
          done = true; mo.disconnect(); clearTimeout(timer);
          // the round trip's legs (page -> kernel, Python, kernel -> page) of the request this input made
          const legs = {};
          for (const [k, l] of Object.entries(e.__nsysNav.legs?.() ?? {})) if (l.at > window.__uxArmedWall) legs[k] = l;
          const t0 = last[startType];
          const long = t0 === undefined ? [] : longTasks.filter(([s, d]) => s + d > t0 - 200 && s < performance.now());
          resolve({ ms: v, shownMs, legs, dispatchMs: lag[startType] ?? null,
            longMs: long.length ? Math.round(long.reduce((a, [s, d]) => a + d, 0)) : 0,
            inputWall: t0 === undefined ? null : performance.timeOrigin + t0 });
        };
        const check = () => {
          if (last[startType] === undefined || !(last[startType] > armedAt)) return;
          if (shown && shownMs === null && shown()) shownMs = performance.now() - last[startType];
          if (cond()) finish(performance.now() - last[startType]);
        };
        const armedAt = performance.now();
        const mo = new MutationObserver(check);
        mo.observe(e, { attributes: true, childList: true, subtree: true, characterData: true });
        const timer = setTimeout(() => finish(null), timeoutMs);
      });
    };
  });
  const samples = {};
  const misses = {};
  const wheels = []; // the wheels sent while the trace records (holdWheels)
  // the request whose legs each kind of measurement reports ([up], [kernel], [down] samples)
  const LEG_OF = { tip: "bucket", details: "details", area: "analyses" };
  async function measure(name, kind, startType, input, timeoutMs = 20000, tag = "") {
    await page.evaluate(([k, s, t]) => window.__uxArm(k, s, t), [kind, startType, timeoutMs]);
    await input();
    const { ms, shownMs, legs, dispatchMs, longMs } = await page.evaluate(() => window.__uxPending);
    if (startType === "wheel" && cdp) wheels.push({ name, ms, shownMs, dispatchMs });
    if (ms !== null && dispatchMs !== null && kind === "view") (samples[`${name} [dispatch]`] ??= []).push(Math.round(dispatchMs * 100) / 100);
    if (ms !== null && kind === "view" && process.env.BENCH_LONGTASKS) (samples[`${name} [long tasks]`] ??= []).push(longMs);
    if (ms === null) misses[name] = (misses[name] || 0) + 1;
    else (samples[name] ??= []).push(Math.round(ms * 100) / 100);
    const leg = ms === null ? null : legs[LEG_OF[kind]];
    if (leg) for (const k of ["up", "kernel", "down"]) (samples[`${name} [${k}]`] ??= []).push(leg[k]);
    // a request answered in parts (the area's analyses): its first part's legs too
    const first = ms === null ? null : legs[`${LEG_OF[kind]}:first`];
    if (first) for (const k of ["kernel", "down"]) (samples[`${name} [first answer: ${k}]`] ??= []).push(first[k]);
    // the same input until a frame showed it (from the data already there, before its own data)
    if (shownMs !== null) (samples[`${name} (shown)`] ??= []).push(Math.round(shownMs * 100) / 100);
    if (shownMs !== null && tag) (samples[`${name} (shown) ${tag}`] ??= []).push(Math.round(shownMs * 100) / 100);
    await settle();
  }
  // every request answered and the latest view drawn (between measurements)
  const settle = () => page.waitForFunction(() => {
    const e = document.querySelector(".nsys-tl");
    const d = e.dataset;
    return d.answered === d.requests && Number(d.drawnSeq || 0) >= e.__nsysNav.seq();
  }, null, { timeout: 60000, polling: 20 });
  const focusPlot = () => tl.evaluate((e) => e.querySelector("canvas").focus());
  const rows = () => tl.evaluate((e) => ({ rows: e.__nsysNav.rows(), top: e.__nsysNav.scrollTop() }));

  // A wheel sent over CDP (Input.dispatchMouseEvent, what Playwright's mouse.wheel sends) is held
  // in the browser until the renderer has committed its next frame (DevTools' InputHandler inserts a
  // visual-state callback before it forwards a wheel or touch event, so that listeners added just
  // before see it); keys and mouse moves are forwarded at once, and a person's wheel (from the OS)
  // is too. Each wheel's hold is read from a small trace ("latencyInfo": its InputLatency::MouseWheel,
  // ORIGINAL = the event's timeStamp -> BEGIN_RWH = forwarded to the renderer), as "[CDP hold]".
  // A forwarded wheel (blocking: the widget's listener is not passive) is dispatched on the main
  // thread at the start of the next main frame (rAF-aligned input; the trace shows it within 0.2 ms
  // of BeginMainThreadFrame, "disabled-by-default-devtools.timeline.frame"), so a person's wheel,
  // forwarded at its timeStamp, is dispatched at the first main frame that starts after it (1 ms on):
  // "[dispatch, a person's wheel]" = that frame's start - timeStamp, and "(shown) [a person's wheel]"
  // = that + (shown - dispatch) of the same input (the widget's own part, measured).
  // BENCH_WHEEL_TRACE=0 turns this trace off. BENCH_TRACE=FILE: a full Chrome trace (input latency,
  // the renderer's and the compositor's slices) of the first BENCH_TRACE_ROUNDS rounds (default 2);
  // "{out}" in FILE is replaced by the output folder's name (interact-before, interact).
  const traceRounds = process.env.BENCH_TRACE ? Number(process.env.BENCH_TRACE_ROUNDS || 2) : N;
  let cdp = null;
  if (process.env.BENCH_TRACE || process.env.BENCH_WHEEL_TRACE !== "0") {
    cdp = await page.context().newCDPSession(page);
    const includedCategories = process.env.BENCH_TRACE ? ["input", "latencyInfo", "benchmark", "toplevel", "devtools.timeline",
      "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.frame", "viz", "cc", "blink",
      "renderer.scheduler", "gpu", "scheduler", "disabled-by-default-input", "disabled-by-default-cc.debug.scheduler",
      "mojom", "ipc", "v8"] : ["latencyInfo", "disabled-by-default-devtools.timeline.frame"];
    await cdp.send("Tracing.start", { transferMode: "ReturnAsStream", traceConfig: { includedCategories } });
  }
  const stopTrace = async () => {
    const text = await endTrace(cdp);
    cdp = null;
    // ("{out}" in the name: the output folder's name, e.g. interact-before / interact with --before)
    if (process.env.BENCH_TRACE) fs.writeFileSync(process.env.BENCH_TRACE.replace("{out}", path.basename(outDir)), text);
    holdWheels(JSON.parse(text));
  };
  // each wheel's hold and main frame (ms after its timeStamp), in the order sent: one
  // InputLatency::MouseWheel per event the browser forwards (the wheel and the phase-ended one
  // DevTools adds, both with the wheel's ORIGINAL); the main frames of the renderer that has most
  const holdWheels = (trace) => {
    const events = trace.traceEvents ?? trace;
    const holds = new Map();
    const frames = new Map(); // pid -> BeginMainThreadFrame times (us)
    for (const e of events) {
      if (e.name === "BeginMainThreadFrame") {
        if (!frames.has(e.pid)) frames.set(e.pid, []);
        frames.get(e.pid).push(e.ts);
      }
      if (e.name !== "InputLatency::MouseWheel" || e.ph !== "b") continue;
      const c = Object.fromEntries((e.args?.chrome_latency_info?.component_info ?? []).map((x) => [x.component_type, x.time_us]));
      const t0 = c.COMPONENT_INPUT_EVENT_LATENCY_ORIGINAL, t1 = c.COMPONENT_INPUT_EVENT_LATENCY_BEGIN_RWH;
      if (t0 !== undefined && t1 !== undefined && !holds.has(t0)) holds.set(t0, t1);
    }
    const main = [...frames.values()].sort((x, y) => y.length - x.length)[0]?.sort((x, y) => x - y) ?? [];
    const held = [...holds.entries()].sort((x, y) => x[0] - y[0]);
    const sent = wheels.splice(0);
    if (held.length !== sent.length || !main.length) {
      log("wheel holds not matched: not reported", { traced: held.length, sent: sent.length, frames: main.length });
      return;
    }
    const r = (v) => Math.round(v * 100) / 100;
    sent.forEach((w, i) => {
      const [t0, t1] = held[i];
      // the first main frame that starts 1 ms or more after t0 (a key reaches the main thread's
      // queue 0.3-1 ms after its timeStamp in the same traces; a frame begun before the wheel
      // could reach it is not counted)
      let lo = 0, hi = main.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (main[m] < t0 + 1000) lo = m + 1; else hi = m; }
      (samples[`${w.name} [CDP hold]`] ??= []).push(r((t1 - t0) / 1000));
      if (lo === main.length || w.dispatchMs === null) return;
      const person = (main[lo] - t0) / 1000;
      (samples[`${w.name} [dispatch, a person's wheel]`] ??= []).push(r(person));
      if (w.shownMs !== null) (samples[`${w.name} (shown) [a person's wheel]`] ??= []).push(r(person + w.shownMs - w.dispatchMs));
    });
  };
  for (let round = 0; round < N; round++) {
    if (cdp && round === traceRounds) await stopTrace();
    await focusPlot();
    await page.keyboard.press("0"); // the whole profile
    await settle();
    const depth = 1 + (round % 4); // zoom in 1-4 notches first: every interaction at several scales
    for (let k = 0; k < depth; k++) {
      await page.mouse.move(plotX(0.2 + 0.6 * rnd()), box.y + 60);
      await measure("zoom: ctrl+wheel", "view", "wheel", async () => {
        await page.keyboard.down("Control");
        await page.mouse.wheel(0, -300);
        await page.keyboard.up("Control");
      }, 20000, k === 0 ? "[1st notch]" : "[later notches]");
    }
    await focusPlot();
    await measure("zoom: W key", "view", "keydown", () => page.keyboard.press("w"));
    await measure("zoom: S key", "view", "keydown", () => page.keyboard.press("s"));
    await measure("zoom: + button", "view", "click", () => tl.locator(".nsys-tl-zoom-in").click());
    await measure("zoom: - button", "view", "click", () => tl.locator(".nsys-tl-zoom-out").click());
    await focusPlot();
    await measure("pan: D key", "view", "keydown", () => page.keyboard.press("d"));
    await measure("pan: A key", "view", "keydown", () => page.keyboard.press("a"));
    await page.mouse.move(plotX(0.5), box.y + 60);
    await measure("pan: wheel", "view", "wheel", () => page.mouse.wheel(0, rnd() < 0.5 ? -120 : 120));
    // drag: the last move of a drag -> its view drawn with its data
    const x0 = plotX(0.3 + 0.4 * rnd());
    await page.mouse.move(x0, box.y + 60);
    await page.mouse.down();
    for (let s = 1; s <= 3; s++) await page.mouse.move(x0 + s * 20, box.y + 60);
    await settle();
    await measure("pan: drag", "view", "pointermove", () => page.mouse.move(x0 + 100, box.y + 60));
    await page.mouse.up();
    await settle();
    // hover: the tooltip with its details (a bucket's count and longest op: a "bucket" request)
    const { rows: rs, top } = await rows();
    const gpuRows = rs.map((r, i) => [r, i]).filter(([r, i]) => r.kind === "gpu" && rowY(i, top) < box.y + box.height - 8);
    for (let h = 0; h < 3 && gpuRows.length; h++) {
      const [, i] = gpuRows[Math.floor(rnd() * gpuRows.length)];
      await page.mouse.move(plotX(0.05), box.y + 10); // off the rows first
      await measure("hover: tooltip complete", "tip", "pointermove", () => page.mouse.move(plotX(0.1 + 0.8 * rnd()), rowY(i, top)), 3000);
    }
    // select: a click on a GPU op -> its details panel (kernel/details + kernel/explain)
    for (let c = 0; c < 3 && gpuRows.length; c++) {
      const [, i] = gpuRows[Math.floor(rnd() * gpuRows.length)];
      await measure("select: click -> details", "details", "pointerup", () => page.mouse.click(plotX(0.1 + 0.8 * rnd()), rowY(i, top)), 5000);
    }
    // the same after the pointer rested on the op (150 ms, as a person's pointer does before a
    // click): its details asked ahead on the dwell, the click draws them with no round trip
    for (let c = 0; c < 3 && gpuRows.length; c++) {
      const [, i] = gpuRows[Math.floor(rnd() * gpuRows.length)];
      const x = plotX(0.1 + 0.8 * rnd()), y = rowY(i, top);
      await page.mouse.move(x, y);
      await page.waitForTimeout(150);
      await measure("select: rest, click -> details", "details", "pointerup", () => page.mouse.click(x, y), 5000);
    }
    // area selection: a drag on the time axis -> the window's analyses shown
    const a = 0.2 + 0.4 * rnd();
    await measure("select: area -> stats", "area", "pointerup", async () => {
      await page.mouse.move(plotX(a), box.y + 10);
      await page.mouse.down();
      await page.mouse.move(plotX(a + 0.1), box.y + 10);
      await page.mouse.move(plotX(a + 0.2), box.y + 10);
      await page.mouse.up();
    }, 30000);
    await focusPlot();
    await page.keyboard.press("Escape"); // clears the selection
    // expand / collapse a row group (a click on its label): the rows drawn, every one with its data
    const groups = (await rows()).rows.map((r, i) => [r, i]).filter(([r, i]) => r.open !== undefined && rowY(i, top) < box.y + box.height - 8);
    if (groups.length) {
      const [g, i] = groups[round % groups.length];
      const t2 = (await rows()).top;
      await measure(g.open ? "collapse: row group" : "expand: row group", "rows", "pointerdown", () => page.mouse.click(box.x + 30, rowY(i, t2)));
      const t3 = (await rows()).top;
      await measure(g.open ? "expand: row group" : "collapse: row group", "rows", "pointerdown", () => page.mouse.click(box.x + 30, rowY(i, t3)));
    }
  }
  // JupyterLab's own floor for a Ctrl+wheel: a trivial element laid over the page (fixed, no widget
  // code) with one non-passive wheel listener that paints a colour; timeStamp -> its listener
  // ([dispatch]) and -> the next animation frame (shown), the CDP hold read like the widget's
  const floorName = "floor: ctrl+wheel, trivial listener";
  await page.evaluate(() => {
    const f = document.createElement("div");
    f.id = "nsys-wheel-floor";
    f.style.cssText = "position:fixed;right:20px;bottom:40px;width:240px;height:120px;z-index:10000;background:#eee";
    f.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const t = ev.timeStamp, lag = performance.now() - t;
      f.style.background = f.style.background === "rgb(238, 238, 238)" ? "#ddd" : "#eee";
      requestAnimationFrame(() => { window.__floorWheel = { dispatchMs: lag, shownMs: performance.now() - t }; });
    }, { passive: false });
    document.body.append(f);
  });
  const fb = await page.locator("#nsys-wheel-floor").boundingBox();
  for (let k = 0; k < 2 * N; k++) {
    await page.mouse.move(fb.x + 40 + 10 * (k % 8), fb.y + 60);
    await page.evaluate(() => { window.__floorWheel = null; });
    await page.keyboard.down("Control");
    await page.mouse.wheel(0, -300);
    await page.keyboard.up("Control");
    const r = await page.waitForFunction(() => window.__floorWheel, null, { timeout: 10000, polling: 10 }).then((h) => h.jsonValue());
    const r2 = (v) => Math.round(v * 100) / 100;
    (samples[`${floorName} (shown)`] ??= []).push(r2(r.shownMs));
    (samples[`${floorName} [dispatch]`] ??= []).push(r2(r.dispatchMs));
    if (cdp) wheels.push({ name: floorName, ms: null, shownMs: r.shownMs, dispatchMs: r.dispatchMs });
    await page.waitForTimeout(100);
  }
  await page.evaluate(() => document.getElementById("nsys-wheel-floor").remove());
  if (cdp) await stopTrace();
  // the notebook's own round trip beside ours: an empty "ping" (answered in the kernel's message
  // handler) and a "bucket" request (a worker thread and the server), one at a time, 20 each,
  // with their legs (page -> kernel handler, Python, kernel -> page)
  const probe = await tl.evaluate(async (e, n) => {
    const nav = e.__nsysNav, out = {};
    const b = nav.bucketAt(nav.labelW() + 200, 22 + 8) ?? { track: "gpu:0:7", start: 0, resolution: 1 << 20 };
    for (let k = 0; k < n; k++) {
      for (const [kind, fields] of [["ping", {}], ["bucket", { ...b, start: b.start + (k + 1) * b.resolution }]]) {
        const t0 = performance.now();
        await nav.ask(kind, fields);
        const ms = performance.now() - t0;
        const l = nav.legs?.()[kind];
        for (const [key, v] of [["", ms], [" [up]", l?.up], [" [kernel]", l?.kernel], [" [down]", l?.down]]) {
          if (v !== undefined) (out[`round trip: ${kind}${key}`] ??= []).push(Math.round(v * 100) / 100);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return out;
  }, 20);
  Object.assign(samples, probe);
  await tl.screenshot({ path: path.join(outDir, "bench-ux-timeline.png") });
  result.samples = samples;
  result.misses = misses;
  result.final = await tl.evaluate((e) => ({ ...e.dataset }));
}

try {
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 120000 });
  await page.waitForFunction(() => window.jupyterapp && document.querySelector(".jp-Notebook"), null, { timeout: 120000 });
  if (mode === "first") await first();
  else await interact();
  result.ok = true;
} catch (e) {
  result.error = String(e && e.stack ? e.stack : e);
  console.error(`[bench-ux] FAILED: ${result.error}`);
  try {
    await page.screenshot({ path: path.join(outDir, "bench-ux-failure.png") });
  } catch {}
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  fs.writeFileSync(path.join(outDir, "bench-ux.json"), JSON.stringify(result, null, 1));
}
process.exit(result.ok ? 0 : 1);
