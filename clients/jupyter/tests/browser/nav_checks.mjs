// Navigation like Nsight Systems and Perfetto in the widget (the VS Code webview's
// navigation.test.ts, here in a notebook host): `/` focuses the search, Enter / Shift+Enter step
// through the matches ("2 of N"), zooming to each and outlining it (CUDA API calls too, picked in the
// kind select); `w.show(top_kernels rows)` outlines their kernels; a drag on the time axis
// selects a range whose analyses show under the plot; the wheel pans, W zooms, `?` lists the
// keys, Esc closes them and clears the range; `w.view = (start, end)` in the kernel moves the
// widget and `w.view` / `w.selection` read what the widget shows (JupyterLab's app object runs
// the code in the notebook's kernel). Throws on the first failure.

/** canvas pixels near colour rgb (plot area) */
async function pixels(tl, rgb) {
  return tl.evaluate((e, c0) => {
    const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
    const lw = e.__nsysNav.labelW();
    const d = g.getImageData(Math.round(lw * dpr), Math.round(22 * dpr), c.width - Math.round(lw * dpr), c.height - Math.round(22 * dpr)).data;
    let n = 0;
    for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k] - c0[0]) + Math.abs(d[k + 1] - c0[1]) + Math.abs(d[k + 2] - c0[2]) < 40) n++;
    return n;
  }, rgb);
}

export async function checkNavigation(page, tl, step, shot) {
  const nav = () => tl.evaluate((e) => e.__nsysNav.view());
  const canvas = tl.locator("canvas");
  const box = await canvas.boundingBox();
  const lw = await tl.evaluate((e) => e.__nsysNav.labelW());
  await canvas.focus();
  await page.keyboard.press("0");
  // search: `/` focuses the box, Enter steps
  await page.keyboard.press("/");
  if (!(await tl.evaluate((e) => document.activeElement === e.querySelector(".nsys-tl-search input")))) throw new Error("/ did not focus the search");
  await page.keyboard.type("nccl");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /^1 of \d/.test(document.querySelector(".nsys-tl-search").dataset.counter || ""), null, { timeout: 30000 });
  const first = await tl.evaluate((e) => e.dataset.match);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /^2 of \d/.test(document.querySelector(".nsys-tl-search").dataset.counter || ""), null, { timeout: 30000 });
  const second = await tl.evaluate((e) => e.dataset.match);
  if (!first || first === second) throw new Error(`Enter did not move to the next match: ${first} ${second}`);
  await page.waitForTimeout(400);
  const outlined = await pixels(tl, [255, 159, 28]);
  const counter = await tl.evaluate((e) => e.querySelector(".nsys-tl-search").dataset.counter);
  step("search", { counter, first, second, outlined, view: await nav() });
  if (outlined < 10) throw new Error(`the current match is not outlined (${outlined} px)`);
  await tl.locator(".nsys-tl-prev").click(); // the previous-match button (Shift+Enter in the box does the same)
  await page.waitForFunction(() => /^1 of \d/.test(document.querySelector(".nsys-tl-search")?.dataset.counter || ""), null, { timeout: 30000 });
  if ((await tl.evaluate((e) => e.dataset.match)) !== first) throw new Error("the previous-match button did not go back");
  if (shot) await tl.screenshot({ path: shot("search") });
  await page.keyboard.press("Escape");
  // the kind select: CUDA API calls are found, zoomed to and outlined on their thread's API row
  const box_ = tl.locator(".nsys-tl-search input");
  await tl.locator(".nsys-tl-kinds").selectOption({ label: "CUDA API" });
  await box_.fill("cudaMemcpy");
  await box_.press("Enter");
  // the first call at or after the view's start: "k of N" for a CUDA API match
  await page.waitForFunction(() => /^api:/.test(document.querySelector(".nsys-tl").dataset.match || ""), null, { timeout: 30000 });
  await page.waitForTimeout(400);
  const api = await tl.evaluate((e) => e.dataset.match), apiOutlined = await pixels(tl, [255, 159, 28]);
  step("search CUDA API", { match: api, outlined: apiOutlined, counter: await tl.evaluate((e) => e.querySelector(".nsys-tl-search").dataset.counter) });
  if (!/^api:\d+$/.test(api || "") || apiOutlined < 10) throw new Error(`CUDA API search: ${api}, ${apiOutlined} px outlined`);
  await tl.locator(".nsys-tl-kinds").selectOption({ index: 0 });
  await box_.press("Escape");
  // a drag on the time axis: the range and its analyses
  await canvas.focus();
  await page.keyboard.press("0");
  await page.waitForTimeout(200);
  const x0 = box.x + lw + 150, x1 = box.x + lw + 450;
  await page.mouse.move(x0, box.y + 10);
  await page.mouse.down();
  for (let i = 1; i <= 6; i++) await page.mouse.move(x0 + ((x1 - x0) * i) / 6, box.y + 10);
  await page.mouse.up();
  const range = await tl.evaluate((e) => e.dataset.range);
  if (!range) throw new Error("a drag on the time axis selected no range");
  await page.waitForFunction(() => document.querySelector(".nsys-tl-range")?.dataset.loaded === "true", null, { timeout: 30000 });
  const panel = await tl.locator(".nsys-tl-range").innerText();
  const kernels = await tl.evaluate((e) => e.querySelector(".nsys-tl-range").dataset.kernels);
  step("range", { range, kernels, panel: panel.slice(0, 200) });
  if (!(Number(kernels) > 0) || !/overlap/.test(panel) || !/top kernels in the range/.test(panel)) throw new Error(`range panel incomplete: ${panel.slice(0, 300)}`);
  if ((await pixels(tl, [0, 127, 212])) < 50) throw new Error("the range is not drawn");
  if (shot) await tl.screenshot({ path: shot("range") });
  // F fits the range; the wheel pans; W zooms; ? lists the keys; Esc closes them, then clears the range
  await canvas.focus();
  await page.keyboard.press("f");
  const r = JSON.parse(range), f = await nav();
  if (Math.abs(f.start - r.start) > 1 || Math.abs(f.end - r.end) > 1) throw new Error(`F did not fit the range: ${JSON.stringify(f)} ${range}`);
  await page.mouse.move(box.x + lw + 200, box.y + 60);
  await page.mouse.wheel(0, 200);
  const p = await nav();
  if (!(p.start > f.start) || Math.abs((p.end - p.start) - (f.end - f.start)) > 1) throw new Error(`the wheel did not pan: ${JSON.stringify(p)}`);
  await page.keyboard.press("w");
  const z = await nav();
  if (!(z.end - z.start < (p.end - p.start) * 0.7)) throw new Error("W did not zoom in");
  await page.keyboard.press("?");
  const help = await tl.locator(".nsys-tl-help").innerText();
  if (!/Ctrl \+ wheel/.test(help)) throw new Error(`? overlay: ${help}`);
  await page.keyboard.press("Escape");
  await page.keyboard.press("Escape");
  const after = await tl.evaluate((e) => ({ help: getComputedStyle(e.querySelector(".nsys-tl-help")).display, range: e.dataset.range }));
  if (after.help !== "none" || after.range) throw new Error(`Esc: ${JSON.stringify(after)}`);
  step("keys", { fit: f, panned: p, zoomed: z });
  if (await page.evaluate(() => !!window.jupyterapp)) await checkPythonView(page, tl, step);
}

/** Runs `code` in the notebook's kernel; its printed text. */
export function run(page, code) {
  return page.evaluate(async (c) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const f = kernel.requestExecute({ code: c });
    let out = "";
    f.onIOPub = (m) => {
      if (m.header.msg_type === "stream") out += m.content.text;
      if (m.header.msg_type === "error") out += `ERROR ${m.content.ename}: ${m.content.evalue}`;
    };
    await f.done;
    return out;
  }, code);
}

async function checkPythonView(page, tl, step) {
  // Python -> widget: the window set in the kernel is the one shown (offsets: origin 0 here)
  const origin = Number(await tl.evaluate((e) => e.dataset.origin));
  const set = await run(page, "s0, e0 = w.span['start'], w.span['end']\n" +
    "a, b = int(w.origin) + s0 + (e0 - s0) // 4, int(w.origin) + s0 + (e0 - s0) // 2\nw.view = (a, b)\nprint(a, b)");
  const [a, b] = set.trim().split(/\s+/).map(Number);
  if (!(b > a)) throw new Error(`w.view = ...: ${set}`);
  await page.waitForFunction(([x, y]) => {
    const v = document.querySelector(".nsys-tl").__nsysNav.view();
    return v.start === x && v.end === y;
  }, [a - origin, b - origin], { timeout: 15000 }).catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify({ set, origin, view: await tl.evaluate((x) => x.__nsysNav.view()), py: await run(page, "print(w._view, w.view, nsys_ai_native.__file__)") })}`);
  });
  // widget -> Python: a pan (D) and a range, read back exactly
  await tl.locator("canvas").focus();
  await page.keyboard.press("d");
  const v = await tl.evaluate((e) => e.__nsysNav.view());
  await page.waitForTimeout(600); // the widget writes its view 150 ms after the last change
  const got = (await run(page, "print(*w.view, w.selection)")).trim();
  const want = `${Math.round(v.start) + origin} ${Math.round(v.end) + origin} None`;
  step("python view", { set: [a, b], shown: v, read: got });
  if (got !== want) throw new Error(`w.view after a pan: ${got}, expected ${want}`);
  await checkShownRows(page, tl, step);
}

/** `w.show(p.top_kernels().head(2))`: the rows' kernels in view outlined (lime), a list of the two
 *  entries whose clicks zoom to each next instance, pans inside the window fetched ask nothing,
 *  `w.show(None)` clears. */
async function checkShownRows(page, tl, step) {
  const lime = [57, 255, 20];
  const marks = () => tl.evaluate((e) => ({ ...e.querySelector(".nsys-tl-marks").dataset,
    root: e.dataset.markNow, fetches: e.__nsysNav.fetches().marks, view: e.__nsysNav.view() }));
  if ((await pixels(tl, lime)) > 0) throw new Error("lime outlines before any row is shown");
  const out = await run(page, "top = p.top_kernels().head(2)\nw.show(top)\nprint(*[m['count'] for m in w.marked])");
  const counts = out.trim().split(/\s+/).map(Number);
  if (counts.length !== 2 || !(counts[0] > 0)) throw new Error(`w.show(top): ${out}`);
  await page.waitForFunction(() => document.querySelector(".nsys-tl-marks")?.dataset.marks === "2", null, { timeout: 15000 });
  await tl.locator("canvas").focus();
  await page.keyboard.press("0");
  await page.waitForFunction(() => Number(document.querySelector(".nsys-tl-marks").dataset.inView) > 0, null, { timeout: 15000 });
  await page.waitForTimeout(300);
  const whole = await marks(), outlined = await pixels(tl, lime);
  const labels = await tl.locator(".nsys-tl-marks button").allInnerTexts();
  if (outlined < 20) throw new Error(`the shown rows' kernels are not outlined (${outlined} px)`);
  if (labels.length !== 2 || !labels[0].includes(`(${counts[0].toLocaleString("en-US")})`)) throw new Error(`list: ${labels}`);
  // a click zooms to the entry's next instance (its outline thicker), the next click to the one after
  const btn = tl.locator(".nsys-tl-marks button").first();
  await btn.click();
  await page.waitForFunction(() => !!document.querySelector(".nsys-tl-marks").dataset.now, null, { timeout: 15000 });
  const first = await marks();
  // the instance zoomed to is one of the row's kernels, in view
  const origin = Number(await tl.evaluate((e) => e.dataset.origin));
  const [nm, s0, e0] = (await run(page, `d = p.kernel(${first.now.split(":")[1]})\nprint(d['name'] == top['name'].iloc[0], d['start'], d['end'])`)).trim().split(/\s+/);
  if (nm !== "True" || !(first.view.start <= Number(s0) - origin && Number(e0) - origin <= first.view.end)) throw new Error(`a click zoomed to ${first.now} (${nm} ${s0} ${e0}), view ${JSON.stringify(first.view)}`);
  await btn.click();
  await page.waitForFunction((n) => document.querySelector(".nsys-tl-marks").dataset.now !== n, first.now, { timeout: 15000 });
  const second = await marks();
  if (second.root !== second.now) throw new Error(`the widget's current mark ${second.root}, the list's ${second.now}`);
  if (!(second.view.end - second.view.start < (whole.view.end - whole.view.start) / 10)) throw new Error(`a click did not zoom: ${JSON.stringify(second.view)}`);
  // pans inside the window already fetched (three views wide) ask nothing
  await page.waitForTimeout(300);
  const before = (await marks()).fetches;
  await tl.locator("canvas").focus();
  await page.keyboard.press("d");
  await page.keyboard.press("a");
  await page.keyboard.press("a");
  await page.waitForTimeout(400);
  const after = (await marks()).fetches;
  step("shown rows", { counts, labels, inView: whole.inView, outlined, first: first.now, second: second.now, fetches: [before, after] });
  if (after !== before) throw new Error(`pans inside the cached window asked again (${before} -> ${after} requests)`);
  await run(page, "w.show(None)");
  await page.waitForFunction(() => document.querySelector(".nsys-tl-marks")?.dataset.marks === "0", null, { timeout: 15000 });
  await page.waitForTimeout(200);
  const left = await pixels(tl, lime);
  if (left > 0 || (await tl.locator(".nsys-tl-marks button").count()) !== 0) throw new Error(`w.show(None) left ${left} px outlined`);
}
