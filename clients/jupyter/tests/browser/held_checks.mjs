// What the timeline answers from the data it holds (lab.mjs, JupyterLab and Notebook 7): a GPU
// bucket's tooltip complete with no request once the view's bucket columns are here (its count,
// busy time and longest op equal to a "bucket" request's), a click on a bucket asking for its
// longest op's details in exactly one round trip (the explanation after them), a click after the
// pointer rested on a bucket drawing its details asked ahead with no request, an area selection's
// four analyses in one "analyses" message (held: the same area again asks nothing), and a row group
// collapsed and expanded again drawn complete with no range request. Throws on failure; `step`
// records what it saw.
import { gpuBuckets } from "./immediate_checks.mjs";
import { run } from "./nav_checks.mjs";

const settled = (page, el) => page.waitForFunction((e) => e.dataset.answered === e.dataset.requests &&
  Number(e.dataset.drawnSeq || 0) >= e.__nsysNav.seq() && !e.__nsysNav.bucketColsState().pending, el, { timeout: 30000 });

export async function checkHeldData(page, tl, step) {
  const el = await tl.elementHandle();
  await page.mouse.move(1, 1);
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  await page.keyboard.press("0"); // the whole profile: GPU rows drawn as buckets
  await settled(page, el);
  const cols = await tl.evaluate((e) => e.__nsysNav.bucketColsState());
  const targets = await gpuBuckets(tl, 3);
  step("held data: bucket columns", { ...cols, targets: targets.length });
  if (!targets.length) {
    step("held data: no GPU bucket in the whole-profile view (skipped)");
    return;
  }
  if (!(cols.asked > 0)) throw new Error(`no bucket columns asked for the view: ${JSON.stringify(cols)}`);

  // hover: the tooltip complete in the pointermove's own task, no request; its numbers are a
  // "bucket" request's (asked afterwards, by the test)
  let checked = 0;
  for (const t of targets.slice(0, 12)) {
    const got = await tl.evaluate((e, t) => {
      const c = e.querySelector("canvas"), b = c.getBoundingClientRect(), asked0 = e.__nsysNav.asked().bucket ?? 0;
      c.dispatchEvent(new PointerEvent("pointermove", { clientX: b.left + t.x, clientY: b.top + t.y, bubbles: true }));
      return { shown: e.dataset.tipShown ?? "", tip: e.querySelector(".nsys-tl-tip").textContent,
        asked: (e.__nsysNav.asked().bucket ?? 0) - asked0 };
    }, t);
    const truth = await tl.evaluate((e, t) => e.__nsysNav.ask("bucket", { track: t.track, start: t.start, resolution: t.resolution }), t);
    if (!got.shown.endsWith("|1") || got.asked !== 0) {
      throw new Error(`a held bucket's tooltip was not complete at once, or asked: ${JSON.stringify({ got, t })}`);
    }
    const count = /^(\d+) ops, /m.exec(got.tip)?.[1];
    const longest = /\nlongest: (.*) \(/.exec(got.tip)?.[1];
    if (count !== String(truth.count) || (truth.count > 0 && longest !== String(truth.longestName))) {
      throw new Error(`tooltip ${JSON.stringify(got.tip)} differs from the bucket's ${JSON.stringify(truth)}`);
    }
    checked++;
  }
  step("held data: tooltips complete with no request, equal to the bucket's answer", { checked });

  // click: one "details" request naming the op (known from the columns), no "bucket" request,
  // the op the bucket's longest; the explanation asked once the details are shown
  let clicked = null;
  for (const t of targets.slice(0, 12)) {
    await tl.evaluate((e) => { delete e.dataset.detailsShown; delete e.dataset.detailsFor; });
    const asked0 = await tl.evaluate((e) => e.__nsysNav.asked());
    await page.mouse.click(t.cx, t.cy);
    await page.waitForFunction((e) => e.dataset.detailsFor !== "?", el, { timeout: 30000 });
    const d0 = await tl.evaluate((e) => ({ ...e.dataset }));
    if (d0.detailsFor === undefined || d0.detailsFor === "") continue; // no op starts in this bucket
    await page.waitForFunction((e) => e.dataset.detailsShown === e.dataset.detailsFor, el, { timeout: 30000 });
    await page.waitForFunction((e) => e.dataset.explained === e.dataset.detailsShown, el, { timeout: 60000 });
    const asked1 = await tl.evaluate((e) => e.__nsysNav.asked());
    const delta = (k) => (asked1[k] ?? 0) - (asked0[k] ?? 0);
    const truth = await tl.evaluate((e, t) => e.__nsysNav.ask("bucket", { track: t.track, start: t.start, resolution: t.resolution }), t);
    const d = await tl.evaluate((e) => ({ ...e.dataset }));
    clicked = { detailsBy: d.detailsBy, shown: d.detailsShown, longestId: truth.longestId, details: delta("details"),
      bucket: delta("bucket"), explain: delta("explain"), from: d.detailsFrom };
    // (one "details", asked on the press; none when the op's details were held: the hovers above
    // rested on these buckets)
    if (d.detailsBy !== "op" || clicked.details !== (d.detailsFrom === "held" ? 0 : 1) || clicked.bucket !== 0 || clicked.explain !== 1) {
      throw new Error(`a click on a held bucket did not ask once: ${JSON.stringify(clicked)}`);
    }
    if (String(truth.longestId) !== d.detailsShown) throw new Error(`details of op ${d.detailsShown}, the bucket's longest is ${truth.longestId}`);
    break;
  }
  step("held data: click -> details in one round trip", clicked ?? "no op in the buckets tried (skipped)");

  // a click after the pointer rested on a bucket: its longest op's details were asked ahead on
  // the dwell (one "details"), the click draws them with no request; the explanation after them
  let rested = null;
  for (const t of targets.slice(12)) { // (not the buckets hovered above: their ops' details are held)
    const truth = await tl.evaluate((e, t) => e.__nsysNav.ask("bucket", { track: t.track, start: t.start, resolution: t.resolution }), t);
    if (!(truth.longestId >= 0)) continue;
    await page.mouse.move(1, 1);
    await tl.evaluate((e) => { delete e.dataset.detailsShown; delete e.dataset.detailsFor; delete e.dataset.detailsHeld; });
    const asked0 = await tl.evaluate((e) => e.__nsysNav.asked());
    await page.mouse.move(t.cx, t.cy);
    await page.waitForFunction(([e, id]) => e.dataset.detailsHeld === id, [el, String(truth.longestId)], { timeout: 30000 });
    const asked1 = await tl.evaluate((e) => e.__nsysNav.asked());
    await page.mouse.click(t.cx, t.cy);
    const d = await tl.evaluate((e) => ({ ...e.dataset }));
    await page.waitForFunction((e) => e.dataset.explained === e.dataset.detailsShown, el, { timeout: 60000 });
    const asked2 = await tl.evaluate((e) => e.__nsysNav.asked());
    const delta = (a, b, k) => (b[k] ?? 0) - (a[k] ?? 0);
    rested = { ahead: delta(asked0, asked1, "details"), onClick: delta(asked1, asked2, "details"), explain: delta(asked1, asked2, "explain"),
      from: d.detailsFrom, shown: d.detailsShown, longestId: truth.longestId };
    // the panel filled in the click's own task (read right after it), from the held reply
    if (rested.ahead !== 1 || rested.onClick !== 0 || rested.explain !== 1 || d.detailsFrom !== "held" || d.detailsShown !== String(truth.longestId)) {
      throw new Error(`a click after a rest did not draw the details held: ${JSON.stringify(rested)}`);
    }
    break;
  }
  step("held data: rest, click -> details with no request", rested ?? "no op in the buckets tried (skipped)");

  // a pointer passing over a bucket (it leaves for the axis before the dwell) asks nothing ahead:
  // only a rest does (the reply of one asked ahead lands on the page during the next hover)
  const fresh = [];
  for (const t of targets.slice(13).reverse()) { // (not hovered above)
    const truth = await tl.evaluate((e, t) => e.__nsysNav.ask("bucket", { track: t.track, start: t.start, resolution: t.resolution }), t);
    if (truth.longestId >= 0) fresh.push({ ...t, truth });
    if (fresh.length === 2) break;
  }
  if (fresh.length === 2) {
    const passed = await tl.evaluate(async (e, t) => {
      const c = e.querySelector("canvas"), b = c.getBoundingClientRect(), asked0 = e.__nsysNav.asked().details ?? 0;
      const move = (x, y) => c.dispatchEvent(new PointerEvent("pointermove", { clientX: b.left + x, clientY: b.top + y, bubbles: true }));
      move(t.x, t.y);
      const tip = e.dataset.tipShown ?? "";
      move(t.x, 10); // the time axis
      await new Promise((r) => setTimeout(r, 300)); // 5x the dwell
      return { tip, asked: (e.__nsysNav.asked().details ?? 0) - asked0 };
    }, fresh[0]);
    step("held data: a pointer passing over a bucket asks no details ahead", passed);
    if (!passed.tip.endsWith("|1") || passed.asked !== 0) throw new Error(`a pass over a bucket asked details ahead: ${JSON.stringify(passed)}`);

    // a click with no rest, its reply held back: the panel's first lines (the bucket's longest op's
    // name) drawn in the click's own task from the bucket columns, the rest when the reply comes
    const t = fresh[1];
    await page.mouse.move(1, 1);
    await tl.evaluate((e) => { delete e.dataset.detailsShown; delete e.dataset.detailsFor; delete e.dataset.detailsFirst; e.__nsysNav.hold(true); });
    let first;
    try {
      await page.mouse.click(t.cx, t.cy);
      first = await tl.evaluate((e) => ({ first: e.dataset.detailsFirst, for: e.dataset.detailsFor, shown: e.dataset.detailsShown ?? "",
        from: e.dataset.detailsFrom, name: e.querySelector(".nsys-tl-details strong")?.textContent ?? "" }));
    } finally {
      await tl.evaluate((e) => e.__nsysNav.hold(false));
    }
    await page.waitForFunction((e) => e.dataset.detailsShown === e.dataset.detailsFor, el, { timeout: 30000 });
    const full = await tl.evaluate((e) => ({ shown: e.dataset.detailsShown, name: e.querySelector(".nsys-tl-details strong")?.textContent ?? "" }));
    const got = { ...first, full, longestId: t.truth.longestId, longestName: t.truth.longestName };
    step("held data: click, no rest -> first lines before the reply", got);
    if (first.from === "held" || first.first !== String(t.truth.longestId) || first.for !== first.first || first.shown !== "" ||
        first.name !== String(t.truth.longestName) || full.shown !== first.first) {
      throw new Error(`a click with no rest did not draw the op's first lines at once: ${JSON.stringify(got)}`);
    }
    await page.waitForFunction((e) => e.dataset.explained === e.dataset.detailsShown, el, { timeout: 60000 });
  } else step("held data: pass over / click with no rest: no two fresh buckets with ops (skipped)");
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  await page.keyboard.press("Escape");

  // an area selection: its four analyses asked in ONE "analyses" message, each row filled, the
  // kernels those of top_kernels over the same window asked alone; the same drag again (the whole
  // view) answered from the answers held, with no request
  const area = async () => {
    const b = await tl.evaluate((e) => { const r = e.querySelector("canvas").getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width, lw: e.__nsysNav.labelW() }; });
    const a0 = await tl.evaluate((e) => e.__nsysNav.asked());
    await page.mouse.move(b.x + b.lw + 2, b.y + 10);
    await page.mouse.down();
    await page.mouse.move(b.x + b.w / 2, b.y + 10);
    await page.mouse.move(b.x + b.w + 20, b.y + 10);
    await page.mouse.up();
    await page.waitForFunction(() => document.querySelector(".nsys-tl-range")?.dataset.loaded === "true", null, { timeout: 60000 });
    return tl.evaluate((e, a0) => {
      const box = e.querySelector(".nsys-tl-range"), a1 = e.__nsysNav.asked();
      return { range: JSON.parse(e.dataset.range), analyses: (a1.analyses ?? 0) - (a0.analyses ?? 0), analysis: (a1.analysis ?? 0) - (a0.analysis ?? 0),
        kernels: box.dataset.kernels, shown: box.dataset.shown,
        cells: [...box.querySelectorAll("tr[data-analysis] td")].map((td) => td.textContent) };
    }, a0);
  };
  await settled(page, el);
  // the kernel's order: the analyses' request before the selection's state message (written to
  // Python once the analyses are shown, not ahead of their request and among their answers)
  const lab = await page.evaluate(() => !!window.jupyterapp);
  if (lab) {
    await run(page, "_nsys_order = []\n_nsys_sel = lambda ch: _nsys_order.append('selection')\n" +
      "_nsys_msg = lambda _w, c, _b: _nsys_order.append(str(c.get('kind'))) if isinstance(c, dict) else None\n" +
      "w.observe(_nsys_sel, names='_selection')\nw.on_msg(_nsys_msg)");
  }
  const first = await area();
  if (lab) {
    let order = "";
    for (let k = 0; k < 100; k++) {
      order = (await run(page, "print(w.selection is not None, [k for k in _nsys_order if k in ('analyses', 'selection')])")).trim();
      if (order.startsWith("True")) break;
      await page.waitForTimeout(100);
    }
    await run(page, "w.unobserve(_nsys_sel, names='_selection')\nw.on_msg(_nsys_msg, remove=True)");
    step("area: the kernel's order of the analyses' request and the selection", { order });
    if (order !== "True ['analyses', 'selection']") throw new Error(`the area's messages in the kernel: ${order}`);
  }
  const truthK = await tl.evaluate((e, r) => e.__nsysNav.ask("analysis", { name: "top_kernels", start: Math.round(r.start), end: Math.round(r.end) }), first.range);
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  await page.keyboard.press("Escape");
  const again = await area();
  step("held data: area -> stats in one message, held when asked again", { first, again: { analyses: again.analyses, analysis: again.analysis } });
  if (first.analyses !== 1 || first.analysis !== 0 || first.shown.split(",").sort().join() !== "gpu_idle_gaps,kernel_launch_overhead,overlap,top_kernels"
      || first.cells.some((c) => c === "…" || c.startsWith("error")) || first.kernels !== String(truthK.summary.kernelCount)) {
    throw new Error(`the area's analyses: ${JSON.stringify({ first, kernelCount: truthK.summary.kernelCount })}`);
  }
  if (again.analyses !== 0 || again.analysis !== 0 || JSON.stringify(again.cells) !== JSON.stringify(first.cells)) {
    throw new Error(`the same area again was not answered from the answers held: ${JSON.stringify(again)}`);
  }
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  await page.keyboard.press("Escape");

  // a row group collapsed, then expanded: both frames complete, with no range request
  const groups = await tl.evaluate((e) => {
    const r = e.querySelector("canvas").getBoundingClientRect();
    return e.__nsysNav.rows().map((row, i) => ({ ...row, i, y: r.top + 22 + i * 16 + 8, x: r.left + 30 }))
      .filter((g) => g.open !== undefined && 22 + (g.i + 1) * 16 <= r.height);
  });
  const seen = [];
  for (const g of [groups.find((x) => x.open), groups.find((x) => x.open === false)].filter(Boolean)) {
    for (let k = 0; k < 2; k++) {
      await settled(page, el);
      const before = await tl.evaluate((e) => ({ requests: e.dataset.requests, rows: e.__nsysNav.rows().length, seq: e.__nsysNav.seq() }));
      await page.mouse.click(g.x, g.y);
      // the next frame shows the new rows complete (every row in view from data for this view)
      const frame = await tl.evaluate((e, n0) => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(() =>
        res({ painted: e.dataset.painted, rows: e.__nsysNav.rows().length, requests: e.dataset.requests, n0 })))), before.rows);
      const info = { group: g.key, open: k === 0 ? g.open : !g.open, before, frame };
      seen.push(info);
      if (frame.rows === before.rows || frame.painted !== `${frame.rows}:1:${before.seq}` || frame.requests !== before.requests) {
        throw new Error(`a row group's ${info.open ? "collapse" : "expand"} was not drawn complete from held data: ${JSON.stringify(info)}`);
      }
    }
  }
  step("held data: collapse/expand drawn complete with no range request", { toggles: seen.length, groups: seen.map((s) => s.group) });
  if (!seen.length) step("held data: no row group in view (skipped)");
}
