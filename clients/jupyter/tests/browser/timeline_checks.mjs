// The timeline checks shared by the hosts that are not JupyterLab (vscode_like/run.mjs,
// vscode_ipywidgets8/run.mjs): once the host has displayed `p.show()` on `page`, checks that
// the first range is answered and drawn (screenshot not blank), that 8 wheel zoom steps are
// each answered (in the columns format when the server has it) and drawn, that one more step
// in each of the other reply layouts (json, jsonz, bin) is too, and that a click on a kernel
// shows its details. Throws on the first failure; returns the zoom timings.

import fs from "node:fs";
import path from "node:path";

/** The end of a host runner: on a failure its message and a screenshot, then the browser
 *  closed, its profile directory removed and OUT/NAME-result.json written; exits 0 when
 *  result.ok. */
export async function finishRun(name, { browser, userDataDir, outDir, result, error }) {
  if (error !== undefined) {
    result.error = String(error && error.stack ? error.stack : error);
    console.error(`[${name}] FAILED: ${result.error}`);
    try {
      await browser.pages()[0]?.screenshot({ path: path.join(outDir, `failure-${name}.png`) });
    } catch {}
  }
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  fs.writeFileSync(path.join(outDir, `${name}-result.json`), JSON.stringify(result, null, 2));
  process.exit(result.ok ? 0 : 1);
}

/** Chromium (playwright-core's `chromium`) for a host page served by the local Jupyter server. */
export function launchChromium(chromium, userDataDir) {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    // the page is answered by playwright (no address space): let it reach the local server
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests",
      "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
  });
}

/** One wheel zoom step in each reply layout other than `lastFormat`'s ("json": the server's
 *  JSON as is, "jsonz": deflated, inflated by the browser): each must be answered in that
 *  layout and drawn. Returns layout -> format. */
export async function zoomInOtherLayouts(page, tl, lastFormat) {
  const layouts = {};
  for (const other of ["json", "jsonz"].filter((w) => !lastFormat.startsWith(w + "/"))) {
    await tl.evaluate((e, w) => e.__nsysSetWire(w), other);
    const seq0 = Number(await tl.evaluate((e) => e.dataset.viewSeq));
    await page.keyboard.down("Control"); // Ctrl+wheel zooms (the wheel alone pans)
    await page.mouse.wheel(0, -300);
    await page.keyboard.up("Control");
    await page.waitForFunction((s0) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.viewSeq) > s0 && d.drawnSeq === d.viewSeq && d.answered === d.requests;
    }, seq0, { timeout: 30000 });
    const o = await tl.evaluate((e) => ({ ...e.dataset }));
    await tl.evaluate((e) => e.__nsysSetWire(undefined));
    layouts[other] = o.lastFormat;
    if (Number(o.failed || 0) > 0 || !o.lastFormat.startsWith(other + "/")) throw new Error(`${other} reply: ${JSON.stringify(o)}`);
  }
  return layouts;
}

/** Pixel statistics of a PNG, decoded by the browser itself. */
export async function pngStats(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = "data:image/png;base64," + b64;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    const colors = new Set();
    let nonWhite = 0;
    for (let i = 0; i < d.length; i += 4) {
      const [r, gg, b] = [d[i], d[i + 1], d[i + 2]];
      if (r < 245 || gg < 245 || b < 245) nonWhite++;
      if (colors.size < 5000) colors.add((r << 16) | (gg << 8) | b);
    }
    return { width: c.width, height: c.height, nonWhiteFrac: nonWhite / (d.length / 4), colors: colors.size };
  }, png.toString("base64"));
}

/**
 * @param page playwright page showing one timeline widget
 * @param opts {screenshot: path of the zoomed timeline's PNG, step(name, data)}
 */
export async function checkTimeline(page, { screenshot, step }) {
  const tl = page.locator(".nsys-tl").first();
  await tl.waitFor({ state: "visible", timeout: 60000 });
  await page.waitForFunction(() => { // the first complete frame (from the data sent with the widget, or a reply)
    const d = document.querySelector(".nsys-tl")?.dataset;
    return !!d?.firstDrawn && d.answered === d.requests;
  }, null, { timeout: 60000 });
  const before = await tl.evaluate((e) => ({ ...e.dataset }));
  step("timeline first range answered", before);
  if (Number(before.failed || 0) > 0) throw new Error("first range failed");
  const first = await pngStats(page, await tl.locator("canvas").screenshot());
  step("first view drawn", first);
  if (first.colors < 8 || first.nonWhiteFrac < 0.05) throw new Error(`timeline looks blank: ${JSON.stringify(first)}`);

  const box = await tl.locator("canvas").boundingBox();
  await page.mouse.move(box.x + 210 + (box.width - 210) * 0.4, box.y + 60);
  const trips = [];
  for (let i = 0; i < 8; i++) {
    await page.keyboard.down("Control"); // Ctrl+wheel zooms (the wheel alone pans)
    await page.mouse.wheel(0, i < 6 ? -300 : 300);
    await page.keyboard.up("Control");
    const seq = await tl.evaluate((e) => Number(e.dataset.viewSeq));
    await page.waitForFunction((s) => {
      const d = document.querySelector(".nsys-tl").dataset;
      return Number(d.drawnSeq || 0) >= s && d.answered === d.requests;
    }, seq, { timeout: 30000 });
    trips.push(await tl.evaluate((e) => ({ ...e.dataset })));
  }
  const after = trips[trips.length - 1];
  step("zoomed", after);
  await checkAxis(page, tl, step);
  if (Number(after.failed || 0) > 0) throw new Error(`zoom failed: ${JSON.stringify(after)}`);
  if (!(Number(after.answered) >= Number(before.answered) + 8)) throw new Error("zoom requests not answered");
  if (!/^jsonz?\/columns$/.test(after.lastFormat || "")) throw new Error(`reply format ${after.lastFormat}`);
  // the other reply layout ("jsonz": deflated, inflated by the browser; "json": as the server
  // wrote it): one zoom step
  const layouts = await zoomInOtherLayouts(page, tl, after.lastFormat);
  step("zoom with the other reply layouts", layouts);
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const pings = [];
  for (let i = 0; i < 8; i++) pings.push((await tl.evaluate((e) => e.__nsysPing())).ms);
  const zoom = { inputToDrawP50: med(trips.map((t) => Number(t.lastInputToDrawMs))), emptyMessageP50: med(pings), n: trips.length };
  step("zoom round trips", zoom);
  const shot = await tl.screenshot({ path: screenshot });
  const zoomed = await pngStats(page, shot);
  step("zoomed view drawn", zoomed);
  if (zoomed.colors < 8 || zoomed.nonWhiteFrac < 0.05) throw new Error(`zoomed timeline looks blank: ${JSON.stringify(zoomed)}`);

  // click a kernel on the first GPU row: the details panel (kernel/details + explain)
  let clicked = false;
  for (let k = 0; k < 24 && !clicked; k++) {
    await page.mouse.click(box.x + 215 + ((box.width - 220) * k) / 24, box.y + 22 + 8);
    // a bucket's op is known with its reply (detailsFor "?" until then; none: an empty bucket)
    await page.waitForFunction((e) => e.dataset.detailsFor !== "?", await tl.elementHandle(), { timeout: 30000 });
    clicked = await tl.evaluate((e) => e.dataset.detailsFor !== undefined);
  }
  if (!clicked) throw new Error("no kernel found to click on the first GPU row");
  await page.waitForFunction(() => {
    const d = document.querySelector(".nsys-tl").dataset;
    return d.detailsShown !== undefined && d.detailsShown === d.detailsFor;
  }, null, { timeout: 30000 });
  step("details shown", { opId: await tl.evaluate((e) => e.dataset.detailsShown) });
  return zoom;
}

/** The time axis at every zoom step from the whole profile down to the minimum span (the
 *  zoom-in button, 2x a step): tick labels distinct, a span shown, a base time once zoomed in
 *  far from the start, and the pointer's time on the axis. Returns to the whole profile, the
 *  pointer over the middle of the plot (where the zoom checks wheel). */
export async function checkAxis(page, tl, step) {
  const axis = async () => JSON.parse((await tl.evaluate((e) => e.dataset.axis)) || "{}");
  const zoomIn = tl.locator('button[title^="zoom in"]');
  const seen = [];
  for (let i = 0; i < 24; i++) {
    const seq = Number(await tl.evaluate((e) => e.dataset.viewSeq)) + 1;
    await zoomIn.click();
    await page.waitForFunction((s) => Number(document.querySelector(".nsys-tl").dataset.drawnSeq || 0) >= s, seq, { timeout: 30000 });
    const a = await axis();
    seen.push(a);
    if (!(a.labels?.length >= 2)) throw new Error(`zoom step ${i}: ${a.labels?.length} ticks: ${JSON.stringify(a)}`);
    if (new Set(a.labels).size !== a.labels.length) throw new Error(`zoom step ${i}: repeated axis labels ${a.labels.join(" | ")} (base ${a.base})`);
    if (!/^span \d/.test(a.span)) throw new Error(`zoom step ${i}: no span: ${JSON.stringify(a)}`);
  }
  if (!seen.some((a) => a.base)) throw new Error(`no base time shown zoomed in: ${JSON.stringify(seen[seen.length - 1])}`);
  const box = await tl.locator("canvas").boundingBox();
  await page.mouse.move(box.x + 400, box.y + 60);
  await page.waitForFunction(() => JSON.parse(document.querySelector(".nsys-tl").dataset.axis || "{}").cursor, null, { timeout: 5000 });
  const withCursor = await axis();
  if (!/^-?\d+(\.\d+)? (s|ms|µs|ns)$/.test(withCursor.cursor)) throw new Error(`pointer time: ${withCursor.cursor}`);
  step("axis: distinct labels at 24 zoom steps", { first: seen[0], last: seen[seen.length - 1], cursor: withCursor.cursor });
  await tl.locator('button[title^="whole profile"]').click();
  await page.mouse.move(box.x + 210 + (box.width - 210) * 0.4, box.y + 60);
}
