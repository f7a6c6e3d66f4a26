// No forced layout in the timeline's input handlers (branch lab15): while a wheel, pointermove or
// keydown is dispatched, the widget must not read the layout (scrollTop, clientWidth/Height,
// offsetWidth/Height, getBoundingClientRect) after it has written a text to the DOM (textContent)
// or a scroll offset in the same dispatch: in JupyterLab that read is a synchronous style and layout of the
// whole page inside the input's task (0.9-23 ms per wheel at load 21 in a trace), ahead of the frame
// that shows it. Ctrl+wheel zoom steps, a plain wheel pan, W/S keys and hovers over the rows are
// sent; each must still change what is drawn (the view's sequence, the tooltip).

/** Throws on a layout read after a DOM write inside one input's dispatch, naming the read. */
export async function checkNoLayoutReadsAfterWrites(page, tl, step) {
  await page.evaluate(() => {
    const w = window;
    if (w.__nsysLayoutReads) return;
    const st = (w.__nsysLayoutReads = { input: null, dirty: "", reads: [] });
    const types = ["wheel", "pointermove", "keydown"];
    const end = () => { st.input = null; st.dirty = ""; };
    for (const t of types) {
      // (ended by the bubble listener, or, for an input the widget stops, by the first animation
      // frame callback or task after it: a frame's drawing reads the layout it lays out anyway)
      w.addEventListener(t, (ev) => { st.input = ev.type; st.dirty = ""; requestAnimationFrame(end); setTimeout(end, 0); }, true);
      w.addEventListener(t, end);
    }
    const write = (what) => {
      if (st.input && !st.dirty) { st.dirty = what; st.where = new Error().stack.split("\n").slice(3, 6).join(" <- "); }
    };
    const read = (what) => {
      if (st.input && st.dirty) st.reads.push(`${st.input}: ${what} read after ${st.dirty} written (${st.where}) at ${new Error().stack.split("\n").slice(3, 6).join(" <- ")}`);
    };
    const wrap = (proto, name, onGet, onSet) => {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (!d?.get) return; // (Chromium's inline style properties are not accessors on a prototype)
      Object.defineProperty(proto, name, { ...d,
        get() { if (onGet) onGet(name); return d.get.call(this); },
        ...(d.set ? { set(v) { if (onSet) onSet(name); d.set.call(this, v); } } : {}) });
    };
    wrap(Node.prototype, "textContent", null, (n) => write(n));
    for (const p of ["display", "left", "top", "cursor", "width", "height"]) wrap(CSSStyleDeclaration.prototype, p, null, (n) => write(`style.${n}`));
    for (const p of ["scrollTop", "clientWidth", "clientHeight"]) wrap(Element.prototype, p, read, (n) => write(n));
    for (const p of ["offsetWidth", "offsetHeight"]) wrap(HTMLElement.prototype, p, read, null);
    const gbcr = Element.prototype.getBoundingClientRect;
    Element.prototype.getBoundingClientRect = function () { read("getBoundingClientRect"); return gbcr.call(this); };
  });
  const box = await tl.locator("canvas").boundingBox();
  const labelW = Number(await tl.evaluate((e) => e.dataset.labelWidth || 210));
  const at = (f, y) => [box.x + labelW + (box.width - labelW) * f, box.y + y];
  const seq = () => tl.evaluate((e) => Number(e.dataset.viewSeq));
  const drawn = (s0) => page.waitForFunction((s) => {
    const d = document.querySelector(".nsys-tl").dataset;
    return Number(d.viewSeq) > s && Number(d.drawnSeq) >= Number(d.viewSeq);
  }, s0, { timeout: 30000 });
  const seqs = [];
  await page.mouse.move(...at(0.5, 60));
  for (let k = 0; k < 3; k++) { // Ctrl+wheel zooms
    const s0 = await seq();
    await page.keyboard.down("Control");
    await page.mouse.wheel(0, -300);
    await page.keyboard.up("Control");
    await drawn(s0);
    seqs.push(await seq());
  }
  const s1 = await seq(); // the wheel alone pans
  await page.mouse.wheel(0, 120);
  await drawn(s1);
  await tl.evaluate((e) => e.querySelector("canvas").focus());
  for (const key of ["w", "s"]) {
    const s0 = await seq();
    await page.keyboard.press(key);
    await drawn(s0);
  }
  let tips = 0;
  for (let k = 0; k < 6; k++) { // hovers over the rows: the tooltip is written
    await page.mouse.move(...at(0.15 + 0.13 * k, 22 + 8 + 16 * (k % 3)));
    if (await tl.evaluate((e) => e.querySelector(".nsys-tl-tip").style.display === "block")) tips++;
  }
  const reads = await page.evaluate(() => window.__nsysLayoutReads.reads.splice(0));
  step("no layout read after a write in the input handlers", { zoomSeqs: seqs, tipsShown: tips, reads: reads.slice(0, 5) });
  if (new Set(seqs).size !== 3) throw new Error(`Ctrl+wheel did not zoom each notch: ${seqs}`);
  if (!tips) throw new Error("no hover showed a tooltip");
  if (reads.length) throw new Error(`${reads.length} layout reads after a DOM write in an input's dispatch (a forced layout): ${reads.slice(0, 3).join("; ")}`);
}
