// The timeline widget on the real exports (../shared/profiles, see its PROVENANCE.tsv) in
// headless Chromium: the anywidget module (static/timeline.js) rendered with a stand-in model
// whose messages go to the real Python widget (real_profiles_host.py: `p.show()`, answered
// through its own handler from a real `nsys-ai serve`), one browser, one profile after another.
// For each: no page or console error; a profile with nothing to draw says so visibly; every row
// in view whose tracks have ops in the first view (timeline/range asked by the host, not through
// the widget) draws pixels in its band; the axis labels are distinct at the first view, after 3
// zoom-in steps and a pan, the span shown; hovering an op shows its name in the tooltip,
// clicking a GPU op shows it in the details (and its launch flow); searching that name (from the
// server's answer) selects its matches with Enter / Shift+Enter.
//
//   NODE_MODULES_DIR=clients/jupyter/js/node_modules node real_profiles_check.mjs PYTHON OUT_DIR PROFILE...
// Exit status 0 on success, 1 on failure, 77 when chromium or playwright-core is absent.
// Writes OUT_DIR/real-profiles.json (per profile: open → first frame drawn, ms).
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [python, outDir, ...profiles] = process.argv.slice(2);
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const modules = process.env.NODE_MODULES_DIR || path.join(here, "..", "..", "js", "node_modules");
const bundle = path.join(here, "..", "..", "src", "nsys_ai_native", "static", "timeline.js");
if (!fs.existsSync(chromiumPath) || !fs.existsSync(path.join(modules, "playwright-core"))) { console.log("skip: no chromium or playwright-core"); process.exit(77); }
const { chromium } = createRequire(path.join(modules, "noop.js"))("playwright-core");
fs.mkdirSync(outDir, { recursive: true });
const AXIS_H = 22, ROW_H = 16;

const host = spawn(python, [path.join(here, "real_profiles_host.py")], { stdio: ["pipe", "pipe", "inherit"] });
const lines = readline.createInterface({ input: host.stdout });
let onLine = () => {};
lines.on("line", (l) => onLine(JSON.parse(l)));
host.on("exit", (c) => { console.log(`real_profiles_host.py exited ${c}`); process.exit(1); });
/** One request to the host whose next line answers it (open, ask); replies to the page go around it. */
let waiting;
const hostAsk = (msg) => new Promise((resolve) => { waiting = resolve; host.stdin.write(JSON.stringify(msg) + "\n"); });

const server = http.createServer((req, res) => {
  if (req.url === "/timeline.js") { res.writeHead(200, { "content-type": "text/javascript" }); res.end(fs.readFileSync(bundle)); return; }
  if (req.url !== "/") { res.writeHead(204); res.end(); return; }
  res.writeHead(200, { "content-type": "text/html" });
  res.end(`<!DOCTYPE html><body style="margin:0"><div id="w"></div><script type="module">
import mod from "/timeline.js";
const bytes = (b64) => { const s = atob(b64), a = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i); return new DataView(a.buffer); };
window.__start = (state, first) => {
  const handlers = [];
  const model = { get: (k) => (k === "_first" ? bytes(first) : state[k]), set(k, v) { state[k] = v; }, save_changes() {}, off() {},
    on(ev, cb) { if (ev === "msg:custom") handlers.push(cb); },
    send(content) { window.__hostPost(JSON.stringify(content)); } };
  window.__deliver = (reply, bufs) => handlers.forEach((h) => h(reply, bufs.map(bytes)));
  mod.render({ model, el: document.getElementById("w") });
};
window.__loaded = true;
</script></body>`);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
let errors = [];
page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
page.on("console", (m) => { if (m.type() === "error") errors.push(`console.error ${m.text()}`); });
await page.exposeBinding("__hostPost", (_src, text) => { host.stdin.write(JSON.stringify({ content: JSON.parse(text) }) + "\n"); });
onLine = (m) => {
  if (m.reply !== undefined) void page.evaluate(([r, b]) => window.__deliver(r, b), [m.reply, m.buffers]).catch(() => {});
  else { const w = waiting; waiting = undefined; w?.(m); }
};

let failed = false;
const times = [];
const tl = page.locator(".nsys-tl");
const data = () => tl.evaluate((e) => ({ ...e.dataset }));
const settled = () => page.waitForFunction(() => {
  const d = document.querySelector(".nsys-tl").dataset;
  return d.answered === d.requests && Number(d.drawnSeq || 0) >= document.querySelector(".nsys-tl").__nsysNav.seq();
}, null, { timeout: 30000 });

async function check(file) {
  const name = path.basename(file);
  const fail = (what) => { throw new Error(`${name}: ${what}`); };
  errors = [];
  const t0 = performance.now();
  const opened = await hostAsk({ open: file });
  if (opened.error) fail(`p.show() failed: ${opened.error}`);
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.__loaded);
  await page.evaluate(([s, f]) => window.__start(s, f), [opened.state, opened.first]);
  await page.waitForFunction(() => {
    const e = document.querySelector(".nsys-tl");
    return e && (e.querySelector(".nsys-tl-empty") || (e.dataset.firstDrawn && e.dataset.answered === e.dataset.requests));
  }, null, { timeout: 60000 });
  const ms = performance.now() - t0;
  const tracks = opened.state.tracks.length;
  if (!tracks) {
    const shown = await tl.locator(".nsys-tl-empty").isVisible().catch(() => false);
    if (!shown) fail("no track and no visible message");
    times.push({ profile: name, openMs: opened.openMs, firstFrameMs: null, totalMs: ms, tracks, drawn: "message" });
    if (errors.length) fail(errors.join("; "));
    return;
  }
  const d0 = await data();
  times.push({ profile: name, openMs: opened.openMs, firstFrameMs: ms, totalMs: ms, tracks, drawn: "timeline" });
  if (Number(d0.failed || 0) > 0) fail(`requests failed: ${JSON.stringify(d0)}`);
  const box = await tl.locator("canvas").boundingBox();
  const labelW = await tl.evaluate((e) => e.__nsysNav.labelW());

  /* rows in view whose tracks have ops in the first view draw in their band */
  const rows = (await tl.evaluate((e) => e.__nsysNav.rows())).map((r, i) => ({ ...r, y: AXIS_H + i * ROW_H }))
    .filter((r) => r.y + ROW_H <= box.height && r.tracks.length && r.open !== true); /* an open group draws nothing itself */
  if (!rows.length) fail("no row in view");
  const ids = [...new Set(rows.flatMap((r) => r.tracks))];
  const ref = (await hostAsk({ ask: "timeline/range", view: true, params: { width: Math.floor(box.width - labelW), tracks: ids, maxBytes: 2 ** 30 } })).answer;
  const withOps = new Set(ref.tracks.filter((t) => (t.events?.length ?? 0) + (t.buckets?.length ?? 0) > 0).map((t) => t.id));
  const paintedNow = () => tl.evaluate((e, { bands, labelW, rowH }) => {
    const c = e.querySelector("canvas"), g = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
    return bands.map((y) => {
      const x0 = Math.ceil(labelW * dpr) + 1;
      const px = g.getImageData(x0, Math.floor((y + 2) * dpr), c.width - x0, Math.floor((rowH - 4) * dpr)).data;
      const freq = new Map();
      /* the canvas is transparent where nothing is drawn (the page shows through): colours with their alpha */
      const key = (k) => `${px[k]},${px[k + 1]},${px[k + 2]},${px[k + 3]}`;
      for (let k = 0; k < px.length; k += 4) freq.set(key(k), (freq.get(key(k)) ?? 0) + 1);
      const bg = [...freq.entries()].sort((a, b) => b[1] - a[1])[0][0].split(",").map(Number);
      let n = 0;
      for (let k = 0; k < px.length; k += 4) if ([0, 1, 2, 3].reduce((s, j) => s + Math.abs(px[k + j] - bg[j]), 0) > 60) n++;
      return n;
    });
  }, { bands: rows.map((r) => r.y), labelW, rowH: ROW_H });
  let painted = await paintedNow();
  const waitedMs = [];
  for (let t = 0; t < 20 && rows.some((r, k) => r.tracks.some((id) => withOps.has(id)) && painted[k] === 0); t++) {
    await page.waitForTimeout(100);
    painted = await paintedNow();
    waitedMs.push((t + 1) * 100);
  }
  if (waitedMs.length && !rows.some((r, k) => r.tracks.some((id) => withOps.has(id)) && painted[k] === 0)) console.log(`note ${name}: a row with ops was drawn ${waitedMs.at(-1)} ms after the first complete frame`);
  const blank = rows.filter((r, k) => r.tracks.some((id) => withOps.has(id)) && painted[k] === 0).map((r) => r.key);
  if (blank.length) fail(`rows with ops in view draw nothing: ${blank.join(", ")} (rows ${JSON.stringify(rows.map((r, k) => [r.key, r.y, r.open, painted[k]]))})`);
  if (!rows.some((r) => r.tracks.some((id) => withOps.has(id)))) fail("no row in view has ops");

  /* the axis: distinct labels at the first view, after 3 zoom-in steps and a pan; the span shown */
  await tl.locator("canvas").focus();
  for (const key of ["", "+", "+", "+", "d"]) {
    if (key) { await page.keyboard.press(key); await settled(); }
    const a = JSON.parse((await data()).axis || "{}");
    if (!(a.labels?.length >= 2)) fail(`after '${key}': ${a.labels?.length} ticks`);
    if (new Set(a.labels).size !== a.labels.length) fail(`after '${key}': repeated axis labels ${a.labels.join(" | ")} (base ${a.base})`);
    if (!/^span \d/.test(a.span)) fail(`after '${key}': no span: ${JSON.stringify(a)}`);
  }
  await tl.locator('button[title^="whole profile"]').click();
  await settled();

  let searched = false;
  const searchSteps = async () => {
    searched = true;
    /* search a name the server has (its first kernel or NVTX name, else any kind's), a glob-free part of it:
     * Enter / Shift+Enter select the server's matches in order */
    let kinds;
    let top = (await hostAsk({ ask: "search", params: { query: "*", limit: 1 } })).answer.results?.[0];
    if (!top) { kinds = ["kernel", "nvtx", "memcpy", "memset", "api"]; top = (await hostAsk({ ask: "search", params: { query: "*", limit: 1, kinds } })).answer.results?.[0]; }
    if (!top) fail("the server finds no name");
    const query = top.name.split(/[*?[\]]/).sort((a, b) => b.length - a.length)[0].trim();
    await tl.locator(".nsys-tl-search select").selectOption({ label: kinds ? "all" : "kernels, NVTX" });
    const found = (await hostAsk({ ask: "search", params: { query, limit: 1, instances: 2, ...(kinds ? { kinds } : {}) } })).answer;
    if (!(found.instances.total >= 1)) fail(`the server finds no ${JSON.stringify(query)}`);
    const total = found.instances.total.toLocaleString("en-US");
    const input = tl.locator(".nsys-tl-search input");
    await input.fill(query);
    await input.press("Enter");
    const steps = found.instances.total > 1 ? [[0, ""], [1, "Enter"], [0, "Shift+Enter"]] : [[0, ""]];
    for (const [k, key] of steps) {
      if (key) await input.press(key);
      await page.waitForFunction((c) => document.querySelector(".nsys-tl-search").dataset.counter === c, `${k + 1} of ${total}`, { timeout: 15000 })
        .catch(async () => fail(`search counter ${await tl.evaluate((e) => e.querySelector(".nsys-tl-search").dataset.counter)}, wanted ${k + 1} of ${total}`));
      const m = found.instances.items[k];
      await page.waitForFunction((w) => document.querySelector(".nsys-tl").dataset.match === w, `${m.kind}:${m.id}`, { timeout: 15000 })
        .catch(async () => fail(`search match ${(await data()).match}, wanted ${m.kind}:${m.id}`));
    }
  };
  /* hover an op (a GPU op when there is one): the tooltip names it; a bucket's longest op comes
   * with the view's bucket columns (or a hover's request) */
  const find = () => tl.evaluate((e, { bands, labelW, width, rowH }) => {
    let any;
    for (const y of bands) for (let x = labelW + 2; x < width; x += 2) {
      const h = e.__nsysNav.hit(x, y + rowH / 2);
      if (h && h.name) { if (h.gpu) return { x, y: y + rowH / 2, ...h }; any ??= { x, y: y + rowH / 2, ...h }; break; }
    }
    return any;
  }, { bands: rows.map((r) => r.y), labelW, width: box.width, rowH: ROW_H });
  await page.waitForFunction(() => !document.querySelector(".nsys-tl").__nsysNav.bucketColsState().pending, null, { timeout: 30000 });
  let spot = await find();
  if (!spot) { /* nothing named in the first view (e.g. NVTX buckets only): the search's first match zoomed to */
    await searchSteps();
    await settled();
    await page.waitForFunction(() => !document.querySelector(".nsys-tl").__nsysNav.bucketColsState().pending, null, { timeout: 30000 });
    spot = await find();
    /* still buckets there (their longest ops not held): zoom in on the match until ops are drawn one by one */
    await tl.locator("canvas").focus();
    for (let k = 0; k < 12 && !spot; k++) { await page.keyboard.press("+"); await settled(); spot = await find(); }
  }
  if (!spot) fail("no op under the pointer in view");
  await page.mouse.move(box.x + spot.x, box.y + spot.y);
  await page.waitForFunction((n) => {
    const t = [...document.querySelectorAll(".nsys-tl div")].find((x) => x.style.display === "block" && x.textContent.includes(n));
    return !!t;
  }, spot.name, { timeout: 15000 }).catch(() => fail(`the tooltip does not name ${JSON.stringify(spot.name)}`));

  /* click a GPU op: the details name it; a launched kernel's flow is drawn */
  if (spot.gpu) {
    await page.mouse.click(box.x + spot.x, box.y + spot.y);
    await page.waitForFunction(() => { const d = document.querySelector(".nsys-tl").dataset; return d.detailsShown !== undefined && d.detailsShown === d.detailsFor; }, null, { timeout: 30000 });
    const shown = await tl.locator(".nsys-tl-details").innerText();
    if (!shown.includes(spot.name)) fail(`details do not name ${JSON.stringify(spot.name)}: ${shown.slice(0, 200)}`);
    const det = (await hostAsk({ ask: "kernel/details", params: { kernelId: spot.id } })).answer;
    if (det.api) await page.waitForFunction(() => (document.querySelector(".nsys-tl").dataset.flow || "") !== "", null, { timeout: 15000 })
      .catch(() => fail("a launched kernel's flow is not drawn"));
  }

  if (!searched) await searchSteps();
  if (errors.length) fail(errors.join("; "));
}

for (const file of profiles) {
  try {
    await check(file);
    console.log(`ok ${path.basename(file)}`);
  } catch (e) {
    failed = true;
    console.log(`FAIL ${String(e?.stack ?? e)}`);
    await page.screenshot({ path: path.join(outDir, `failure-${path.basename(file)}.png`) }).catch(() => {});
  }
}
fs.writeFileSync(path.join(outDir, "real-profiles.json"), JSON.stringify(times, null, 2));
await browser.close();
server.close();
host.removeAllListeners("exit");
host.stdin.end();
process.exit(failed ? 1 : 0);
