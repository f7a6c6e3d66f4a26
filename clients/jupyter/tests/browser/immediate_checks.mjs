// What the timeline shows without waiting for a reply (lab.mjs, JupyterLab and Notebook 7):
// the first frame drawn from the data sent with the widget, a pan or zoom drawn from the data
// already there while its own reply is held back, and a click on a zoomed-out bucket answered
// in one round trip. Each check throws on failure; `step` records what it saw.

/** The plot part of the canvas as one signature per pixel column: for each row in view, whether
 *  the pixel near the row's bottom (where every bar reaches) differs from that row's background
 *  (its pixel in the label gutter); and the fraction of such drawn pixels. */
function plotColumns(tl) {
  return tl.evaluate((e) => {
    const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
    const labelW = Number(e.dataset.labelWidth || 210);
    const x0 = Math.round((labelW + 2) * dpr), w = c.width - x0 - Math.round(2 * dpr);
    const ys = [];
    for (let i = 0; 22 + (i + 1) * 16 <= c.height / dpr; i++) ys.push(Math.round((22 + i * 16 + 12) * dpr));
    const lines = ys.map((y) => ({ bg: Array.from(g.getImageData(Math.round((labelW - 3) * dpr), y, 1, 1).data).join(),
      px: g.getImageData(x0, y, w, 1).data }));
    const cols = [];
    let drawn = 0;
    for (let x = 0; x < w; x++) {
      let sig = "";
      for (const l of lines) {
        const k = x * 4;
        const on = `${l.px[k]},${l.px[k + 1]},${l.px[k + 2]},${l.px[k + 3]}` !== l.bg;
        sig += on ? "1" : "0";
        if (on) drawn++;
      }
      cols.push(sig);
    }
    return { cols, dpr, w, drawnFrac: drawn / Math.max(1, w * lines.length) };
  });
}

const painted = (tl) => tl.evaluate((e) => Number((e.dataset.painted || "0:0:0").split(":")[2]));

/** The first complete frame: drawn from the data sent with the widget (no range request) unless
 *  this plot's width puts the view on another grid than the width that data was asked at; then
 *  the request answered it at another resolution (the data sent was drawn meanwhile). */
export async function checkFirstFrame(page, tl, step) {
  await page.waitForFunction((e) => !!e.dataset.firstDrawn, await tl.elementHandle(), { timeout: 60000 });
  const d = await tl.evaluate((e) => ({ ...e.dataset }));
  const [bytes, resolution, width] = (d.initial || "").split("|").map(Number);
  const first = { initialBytes: bytes, initialResolution: resolution, initialWidth: width, plotWidth: Number(d.dataWidth || width),
    firstRequests: Number(d.firstRequests), firstResolution: Number(d.firstResolution) };
  step("first frame", first);
  if (!d.initial) throw new Error("the widget came without its first view's data");
  if (!(bytes > 0)) throw new Error(`the first view's data is empty: ${d.initial}`);
  if (first.firstRequests > 0 && first.firstResolution === resolution) {
    throw new Error(`the first frame waited for ${first.firstRequests} range request(s) at the resolution it already had: ${JSON.stringify(first)}`);
  }
}

/** With the range replies held back: a pan (D) and a zoom (W) are each drawn from the data
 *  already there (the pan: the same picture shifted by the pan's pixels, the part it brings in
 *  drawn from the whole-profile picture; the zoom: a different picture), with no reply handled;
 *  released, the replies draw each view. */
export async function checkDrawsBeforeReply(page, tl, step) {
  const el = await tl.elementHandle();
  const settled = () => page.waitForFunction((e) => e.dataset.answered === e.dataset.requests &&
    Number(e.dataset.drawnSeq || 0) >= e.__nsysNav.seq(), el, { timeout: 30000 });
  await settled();
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  await page.keyboard.press("w"); // a view inside the profile: a pan keeps data on both sides
  await page.keyboard.press("w");
  await page.waitForFunction((e) => e.dataset.answered === e.dataset.requests &&
    Number(e.dataset.drawnSeq || 0) >= e.__nsysNav.seq(), el, { timeout: 30000 });
  const before = await plotColumns(tl);
  await tl.evaluate((e) => e.__nsysNav.hold(true));
  try {
    const seq0 = await tl.evaluate((e) => e.__nsysNav.seq());
    await page.keyboard.press("d"); // pans by 10% of the view
    await page.waitForFunction(([e, s]) => Number((e.dataset.painted || "0:0:0").split(":")[2]) > s, [el, seq0], { timeout: 5000 })
      .catch(() => { throw new Error("a pan was not drawn before its reply"); });
    const pan = await plotColumns(tl);
    const pw = Number(await tl.evaluate((e) => e.dataset.dataWidth || 0)) || before.w / before.dpr;
    const shift = Math.round(0.1 * pw * before.dpr);
    // the pan's picture is the old one moved left by `shift` pixel columns (rounding: within 2 px)
    let same = 0, n = 0;
    for (let x = 4; x < pan.w - shift - 4; x++) {
      n++;
      if ([-2, -1, 0, 1, 2].some((dx) => pan.cols[x] === before.cols[x + shift + dx])) same++;
    }
    const panInfo = { shiftPx: shift, sameColumns: same, columns: n, drawnFrac: pan.drawnFrac, seq: seq0 + 1,
      shownEarly: await tl.evaluate((e) => e.__nsysNav.shownEarly()), painted: await painted(tl) };
    step("pan drawn before its reply", panInfo);
    if (!(panInfo.shownEarly > seq0)) throw new Error(`the pan's frame was not drawn before its data: ${JSON.stringify(panInfo)}`);
    if (before.cols.join("|") === pan.cols.join("|")) throw new Error("the pan did not change the picture before its reply");
    if (same < 0.9 * n) throw new Error(`the pan's picture is not the old one shifted: ${JSON.stringify(panInfo)}`);
    // the part the pan brings in (beyond the old answer) is drawn from the whole-profile picture,
    // not left blank until the reply
    // (GPU rows: their kernels are a few pixels long here, so only that picture fills the part;
    // an NVTX range of the old answer can reach into it)
    const gpuRows = await tl.evaluate((e) => {
      const top = e.__nsysNav.scrollTop();
      return e.__nsysNav.rows().map((r, i) => [r.kind, i - Math.ceil(top / 16)]).filter(([k, i]) => k === "gpu" && i >= 0).map(([, i]) => i);
    });
    const fresh = gpuRows.map((r) => {
      let n = 0;
      for (let x = pan.w - shift + 2; x < pan.w; x++) if (pan.cols[x][r] === "1") n++;
      return n;
    });
    step("pan: the new part drawn from the whole-profile picture", { columns: shift, gpuRowsDrawnPixels: fresh });
    if (!fresh.some((n) => n > 10)) throw new Error(`the part a pan brings in is blank on every GPU row before its reply: ${fresh}`);
    const seq1 = await tl.evaluate((e) => e.__nsysNav.seq());
    await page.keyboard.press("w");
    await page.waitForFunction(([e, s]) => Number((e.dataset.painted || "0:0:0").split(":")[2]) > s, [el, seq1], { timeout: 5000 })
      .catch(() => { throw new Error("a zoom was not drawn before its reply"); });
    const zoom = await plotColumns(tl);
    const zoomEarly = await tl.evaluate((e) => e.__nsysNav.shownEarly());
    step("zoom drawn before its reply", { drawnFrac: zoom.drawnFrac, shownEarly: zoomEarly, seq: seq1 + 1 });
    if (!(zoomEarly > seq1)) throw new Error(`the zoom's frame was not drawn before its data: ${zoomEarly} <= ${seq1}`);
    if (zoom.cols.join("|") === pan.cols.join("|")) throw new Error("the zoom did not change the picture before its reply");
    if (!(zoom.drawnFrac > 0.01)) throw new Error(`the zoom drew a blank plot before its reply: ${zoom.drawnFrac}`);
  } finally {
    await tl.evaluate((e) => e.__nsysNav.hold(false));
  }
  await settled();
  const after = await tl.evaluate((e) => ({ ...e.dataset }));
  step("held replies released: drawn", { drawnSeq: after.drawnSeq, viewSeq: after.viewSeq, requests: after.requests });
  if (Number(after.failed || 0) > 0) throw new Error(`a held reply failed: ${JSON.stringify(after)}`);
}

/** GPU buckets in view, found in the page from the data drawn: at every `step`-th of 40 points
 *  along each GPU row, {x, y} on the canvas, {cx, cy} on the page, and the bucket (bucketAt). */
export function gpuBuckets(tl, step) {
  return tl.evaluate((e, step) => {
    const nav = e.__nsysNav, rows = nav.rows(), out = [];
    const c = e.querySelector("canvas"), r = c.getBoundingClientRect();
    const labelW = Number(e.dataset.labelWidth || 210);
    for (let i = 0; i < rows.length && 22 + (i + 1) * 16 <= r.height; i++) {
      if (rows[i].kind !== "gpu") continue;
      for (let k = 1; k < 40; k += step) {
        const x = labelW + ((r.width - labelW) * k) / 40, y = 22 + i * 16 + 8;
        const hit = nav.bucketAt(x, y);
        if (hit) out.push({ x, y, cx: r.left + x, cy: r.top + y, ...hit });
      }
    }
    return out;
  }, step);
}

/** The whole profile, then a click on a GPU bucket whose "bucket" answer has not come: its
 *  longest op's details come from one "details" request naming the bucket (not after the
 *  bucket's answer), and that op is the bucket's longest (a "bucket" request asked afterwards
 *  says which). */
export async function checkBucketClick(page, tl, step) {
  const el = await tl.elementHandle();
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  await page.keyboard.press("0");
  await page.waitForFunction((e) => e.dataset.answered === e.dataset.requests &&
    Number(e.dataset.drawnSeq || 0) >= e.__nsysNav.seq(), el, { timeout: 30000 });
  const targets = (await gpuBuckets(tl, 1)).map((t) => ({ ...t, x: t.cx, y: t.cy }));
  const seen = [];
  for (const target of targets.slice(0, 12)) {
    await tl.evaluate((e) => { delete e.dataset.detailsShown; });
    const asked0 = await tl.evaluate((e) => e.__nsysNav.asked());
    // replies held while clicking: the pointer's hover asks for the bucket too (the tooltip), and
    // its answer must not come before the click (then the click would know the op already)
    await tl.evaluate((e) => e.__nsysNav.hold(true));
    try {
      await page.mouse.click(target.x, target.y);
    } finally {
      await tl.evaluate((e) => e.__nsysNav.hold(false));
    }
    await page.waitForFunction((e) => e.dataset.detailsFor !== "?", el, { timeout: 30000 });
    const d0 = await tl.evaluate((e) => ({ ...e.dataset }));
    if (d0.detailsFor !== undefined) {
      await page.waitForFunction((e) => e.dataset.detailsShown !== undefined && e.dataset.detailsShown === e.dataset.detailsFor, el,
        { timeout: 30000 });
    }
    const asked1 = await tl.evaluate((e) => e.__nsysNav.asked());
    const delta = (k) => (asked1[k] ?? 0) - (asked0[k] ?? 0);
    const truth = await tl.evaluate((e, t) => e.__nsysNav.ask("bucket", { track: t.track, start: t.start, resolution: t.resolution }), target);
    const d = await tl.evaluate((e) => ({ ...e.dataset }));
    const info = { target, detailsBy: d.detailsBy, detailsShown: d.detailsShown ?? null, longestId: truth.longestId,
      details: delta("details"), bucket: delta("bucket") };
    seen.push(info);
    if (d.detailsBy !== "bucket" || info.details !== 1 || info.bucket > 1) throw new Error(`a bucket click did not ask once: ${JSON.stringify(info)}`);
    // the op shown is the bucket's longest (none shown: no op starts in the bucket, busy from an earlier one)
    if (String(truth.longestId) !== String(d.detailsShown ?? -1)) throw new Error(`details of op ${d.detailsShown}, the bucket's longest is ${truth.longestId}`);
    if (d.detailsShown !== undefined) break;
  }
  step("bucket click -> details in one round trip", { clicks: seen.length, last: seen[seen.length - 1] });
  if (!seen.length) step("bucket click: no GPU bucket in the whole-profile view (skipped)");
  else if (seen[seen.length - 1].detailsShown === null) throw new Error(`no op's details shown for ${seen.length} bucket clicks`);
}

/** A second `p.show()` in the same kernel (a cell added and run): its first view was answered
 *  at the plot width the first widget's requests told the kernel, so its first complete frame is
 *  drawn from the data sent with it, with no range request, and every row in view has pixels. */
export async function checkSecondWidgetNoRequest(page, step, rowsDrawn) {
  const n0 = await page.evaluate(() => document.querySelectorAll(".nsys-tl").length);
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget, nb = panel.content;
    const at = nb.widgets.length;
    nb.model.sharedModel.insertCell(at, { cell_type: "code", source: "w2 = p.show(height=200)\nw2" });
    nb.activeCellIndex = at;
    await window.jupyterapp.commands.execute("notebook:run-cell");
  });
  await page.waitForFunction((n) => document.querySelectorAll(".nsys-tl").length > n, n0, { timeout: 60000 });
  const tl = page.locator(".nsys-tl").nth(n0);
  await tl.scrollIntoViewIfNeeded();
  await page.waitForFunction((e) => !!e.dataset.firstDrawn, await tl.elementHandle(), { timeout: 60000 });
  const d = await tl.evaluate((e) => ({ initial: e.dataset.initial, firstRequests: e.dataset.firstRequests,
    plotWidth: e.dataset.dataWidth, requests: e.dataset.requests }));
  const rows = await rowsDrawn(tl);
  step("second widget: first frame from the data sent with it", { ...d, rows: rows.length, blank: rows.filter((r) => !r.drawn).map((r) => r.id) });
  if (d.firstRequests !== "0") throw new Error(`the second widget's first frame waited for ${d.firstRequests} range request(s): ${JSON.stringify(d)}`);
  if (!rows.length || rows.some((r) => !r.drawn)) throw new Error(`blank rows in the second widget's first frame: ${JSON.stringify(rows)}`);
  await checkFirstViewRest(page, tl, step, rowsDrawn);
  await checkDrawnWhenResized(page, tl, step);
}

/** A widget shorter than its rows: the first view sent with it held only the tracks of the rows
 *  its first frame shows (`data-initial-tracks`: held/all), the rest came in one request right
 *  after that frame (`data-rest-tracks`), so that, with replies then held back, a scroll to the
 *  last rows draws every one of them from data already there, asking nothing. */
async function checkFirstViewRest(page, tl, step, rowsDrawn) {
  const el = await tl.elementHandle();
  const state = () => tl.evaluate((e) => ({ initialTracks: e.dataset.initialTracks, restTracks: e.dataset.restTracks,
    requests: e.dataset.requests, answered: e.dataset.answered, scrollTop: e.querySelector(".nsys-tl-scroll").scrollTop }));
  await page.waitForFunction((e) => e.dataset.answered === e.dataset.requests, el, { timeout: 30000 });
  const d = await state();
  const [held, all] = (d.initialTracks || "").split("/").map(Number);
  step("second widget: first view's tracks, the rest after the first frame", d);
  if (!(held > 0 && held < all)) throw new Error(`the first view held ${d.initialTracks} tracks: expected only the rows in view's`);
  if (Number(d.restTracks) !== all - held) throw new Error(`the rest of the tracks did not come after the first frame: ${JSON.stringify(d)}`);
  await tl.evaluate((e) => e.__nsysNav.hold(true));
  try {
    await tl.evaluate((e) => { const s = e.querySelector(".nsys-tl-scroll"); s.scrollTop = s.scrollHeight; });
    await tl.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const rows = await rowsDrawn(tl);
    const after = await state();
    step("second widget: last rows scrolled into view, replies held", { ...after, rows: rows.length, blank: rows.filter((r) => !r.drawn).map((r) => r.id) });
    if (!(after.scrollTop > 0)) throw new Error(`the second widget did not scroll: ${JSON.stringify(after)}`);
    if (!rows.length || rows.some((r) => !r.drawn)) throw new Error(`blank rows after a scroll to the last rows: ${JSON.stringify(rows)}`);
    if (after.requests !== d.requests) throw new Error(`a scroll to the last rows asked for a range (${d.requests} -> ${after.requests})`);
  } finally {
    await tl.evaluate((e) => { e.__nsysNav.hold(false); e.querySelector(".nsys-tl-scroll").scrollTop = 0; });
  }
  await page.waitForFunction((e) => e.dataset.answered === e.dataset.requests, el, { timeout: 30000 });
}

/** A widget resized (its output narrowed, then widened again) is drawn at its new size in the
 *  frame it is laid out in: a ResizeObserver made after the widget's own (called after it, in the
 *  same frame's rendering steps) sees the canvas already at the new width with the rows drawn;
 *  and no ResizeObserver loop error (a size changed by that drawing would be one). */
async function checkDrawnWhenResized(page, tl, step) {
  const seen = [];
  for (const width of [480, null]) {
    seen.push(await tl.evaluate((e, width) => new Promise((resolve) => {
      let errors = 0;
      const onError = (ev) => { if (/ResizeObserver loop/.test(ev.message)) errors++; };
      window.addEventListener("error", onError);
      const w0 = e.clientWidth;
      const ro = new ResizeObserver(() => {
        if (e.clientWidth === w0) return;
        ro.disconnect();
        const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
        const labelW = Number(e.dataset.labelWidth || 210), x0 = Math.round(labelW * dpr), y = Math.round((22 + 12) * dpr);
        const px = c.width > x0 ? g.getImageData(x0, y, c.width - x0, 1).data : [];
        let drawn = 0;
        for (let k = 3; k < px.length; k += 4) if (px[k] > 0) drawn++;
        const at = { width: e.clientWidth, canvasWidth: c.width / dpr, drawnPx: drawn };
        // a frame later: a loop error, if any, has been reported
        requestAnimationFrame(() => requestAnimationFrame(() => { window.removeEventListener("error", onError); resolve({ ...at, errors }); }));
      });
      ro.observe(e);
      e.style.width = width === null ? "" : `${width}px`;
    }), width));
  }
  step("widget resized: drawn at its new size in the frame it is laid out in", seen);
  for (const s of seen) {
    if (s.canvasWidth !== s.width || !(s.drawnPx > 0) || s.errors) {
      throw new Error(`a resized widget was not drawn at its new size when it was laid out: ${JSON.stringify(seen)}`);
    }
  }
}
