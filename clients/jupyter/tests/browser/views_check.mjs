// The views widget (nsys_ai_native.views) in headless Chromium: the anywidget module
// (static/views.js) rendered with a stand-in model whose messages go to the real Python
// widget (views_host.py, answering through its own handler from a real `nsys-ai serve`).
// Checks what is drawn: the diff view's two time axes stay alike after a zoom of either;
// the rank set shows one row per rank, and a collective clicked on rank 0 marks rank 1
// (the planted straggler) as the last arriver, on its row where its instance starts; the
// views follow JupyterLab's theme variables where the page has them.
//
//   NODE_MODULES_DIR=clients/jupyter/js/node_modules node views_check.mjs PYTHON OUT_DIR
// Exit status 0 on success, 1 on failure, 77 when chromium or playwright-core is absent.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [python, outDir] = process.argv.slice(2);
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const modules = process.env.NODE_MODULES_DIR || path.join(here, "..", "..", "js", "node_modules");
const bundle = path.join(here, "..", "..", "src", "nsys_ai_native", "static", "views.js");
if (!fs.existsSync(chromiumPath) || !fs.existsSync(path.join(modules, "playwright-core"))) { console.log("skip: no chromium or playwright-core"); process.exit(77); }
const { chromium } = createRequire(path.join(modules, "noop.js"))("playwright-core");
fs.mkdirSync(outDir, { recursive: true });
const GUTTER = 210, AXIS_H = 22, ROW_H = 22;

/* the Python host: its first line is the widgets' data, then one reply per request */
const host = spawn(python, [path.join(here, "views_host.py"), outDir], { stdio: ["pipe", "pipe", "inherit"] });
const lines = readline.createInterface({ input: host.stdout });
let onLine = () => {};
lines.on("line", (l) => onLine(JSON.parse(l)));
const ready = await new Promise((resolve, reject) => { onLine = resolve; host.on("exit", (c) => reject(new Error(`views_host.py exited ${c}`))); });

const server = http.createServer((req, res) => {
  if (req.url === "/views.js") { res.writeHead(200, { "content-type": "text/javascript" }); res.end(fs.readFileSync(bundle)); return; }
  res.writeHead(200, { "content-type": "text/html" });
  res.end(`<!DOCTYPE html><body style="margin:0"><div id="w"></div><script type="module">
import mod from "/views.js";
window.__start = (name, init, height) => {
  const handlers = [];
  const model = { get: (k) => (k === "init" ? init : height), set() {}, save_changes() {}, off() {},
    on(ev, cb) { if (ev === "msg:custom") handlers.push(cb); },
    send(content) { window.__hostPost(JSON.stringify({ w: name, content })); } };
  window.__deliver = (reply) => handlers.forEach((h) => h(reply, []));
  mod.render({ model, el: document.getElementById("w") });
};
window.__loaded = true;
</script></body>`);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
let failed = false;
const check = (ok, what) => { console.log(`${ok ? "ok" : "FAIL"} ${what}`); if (!ok) failed = true; };

async function open(name, hostVars = "") {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (e) => check(false, `page error: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error") console.log(`console.${m.type()} ${m.text()}`); });
  await page.exposeBinding("__hostPost", (_src, text) => { host.stdin.write(text + "\n"); });
  onLine = (m) => void page.evaluate((r) => window.__deliver(r), m.reply).catch(() => {});
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.__loaded);
  if (hostVars) await page.evaluate((v) => { document.body.style.cssText += v; }, hostVars); /* a host's theme variables */
  await page.evaluate(([n, i, h]) => window.__start(n, i, h), [name, ready.ready[name].init, ready.ready[name].height]);
  await page.waitForFunction((n) => document.querySelector("#w").shadowRoot.querySelectorAll('.timeline[data-rendered="true"]').length === n, name === "diff" ? 2 : 1, { timeout: 30_000 });
  return page;
}
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
/** canvas `i` of the widget: whether a pixel of colour rgb is in the box (CSS px) */
const hasColour = (page, i, rgb, box) => page.evaluate(({ i, rgb, box }) => {
  const c = document.querySelector("#w").shadowRoot.querySelectorAll("canvas")[i];
  const d = c.getContext("2d").getImageData(Math.max(0, Math.floor(box.x0)), Math.floor(box.y0), Math.max(1, Math.ceil(box.x1 - box.x0)), Math.ceil(box.y1 - box.y0)).data;
  for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k] - rgb[0]) <= 24 && Math.abs(d[k + 1] - rgb[1]) <= 24 && Math.abs(d[k + 2] - rgb[2]) <= 24) return true;
  return false;
}, { i, rgb, box });

try {
  /* the diff view: zoom the base; the new timeline's axis is drawn the same */
  const diff = await open("diff");
  const axes = async () => { await frames(diff); return diff.evaluate(([g, a]) => [...document.querySelector("#w").shadowRoot.querySelectorAll("canvas")].map((c) => {
    const d = c.getContext("2d").getImageData(g, 0, c.width - g, a).data; let s = ""; for (let k = 0; k < d.length; k += 4) s += d[k] > 128 ? "1" : "0"; return s; }), [GUTTER, AXIS_H]); };
  const [b0, c0] = await axes();
  check(b0 === c0, "diff: both axes alike at open");
  const box = await diff.evaluate(() => { const r = document.querySelector("#w").shadowRoot.querySelector("canvas").getBoundingClientRect(); return { x: r.x, y: r.y }; });
  await diff.mouse.move(box.x + GUTTER + 300, box.y + 40);
  await diff.keyboard.down("Control"); /* Ctrl+wheel zooms (the plain wheel pans) */
  await diff.mouse.wheel(0, -400);
  await diff.keyboard.up("Control");
  await diff.mouse.move(2, 2);
  const [b1, c1] = await axes();
  check(b1 !== b0, "diff: the zoom changed the base axis");
  check(b1 === c1, "diff: after zooming the base, the new timeline shows the same times at the same x");
  check(/slower/i.test(await diff.evaluate(() => document.querySelector("#w").shadowRoot.querySelector(".verdict").textContent)), "diff: the verdict on top says slower");
  await diff.screenshot({ path: path.join(outDir, "views-diff.png") });

  /* the rank set: a row per rank; a collective of rank 0 linked, rank 1 marked last where its instance starts */
  const ranks = await open("ranks");
  const root = "document.querySelector('#w').shadowRoot";
  const rows0 = await ranks.evaluate(() => window.__nsysPerf.rowIds());
  check(JSON.stringify(rows0) === '["rank:0","rank:1"]', `ranks: one row per rank (${rows0})`);
  check(/^1 \(straggler\)/.test(await ranks.evaluate((r) => eval(r).querySelector(".view-side tr.straggler").textContent, root)), "ranks: the straggler table names rank 1");
  const { mine, theirs } = ready.probe;
  const origin = 0; /* a small clock (clockOrigin 0): offsets are the profile's times */
  check(JSON.parse(ready.ready.ranks.init).set.window.start < 2 ** 50, "ranks: small clock");
  await ranks.evaluate((r) => eval(r).querySelector(".view-side tbody tr").click(), root); /* open rank 0's streams */
  const dur = mine.end - mine.start;
  await ranks.evaluate(([s, e]) => window.__nsysViews.ranks.setView(s, e), [mine.start - origin - dur, mine.end - origin + dur]);
  await ranks.waitForFunction((r) => eval(r).querySelector(".timeline").dataset.rendered === "true", root);
  await frames(ranks);
  const rows = await ranks.evaluate(() => window.__nsysPerf.rowIds());
  const row = rows.indexOf(`${mine.track}@0`), rank1 = rows.indexOf("rank:1");
  check(row > 0 && rank1 > row, `ranks: rank 0's stream row open (${rows})`);
  const v = await ranks.evaluate(() => window.__nsysViews.ranks.view());
  const xOf = (ns) => GUTTER + ((ns - origin - v.start) / (v.end - v.start)) * v.width;
  const cb = await ranks.evaluate((r) => { const b = eval(r).querySelector("canvas").getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width }; }, root);
  await ranks.mouse.click(cb.x + (xOf(mine.start) + xOf(mine.end)) / 2, cb.y + AXIS_H + row * ROW_H + ROW_H / 2);
  await ranks.waitForFunction((r) => eval(r).querySelector(".view-ranks").dataset.linked === "2", root, { timeout: 15_000 });
  await ranks.mouse.move(2, 2);
  await frames(ranks);
  const last = await ranks.evaluate(() => window.__nsysViews.ranks.last());
  check(last?.rank === 1 && last.start === theirs.start - origin, `ranks: rank 1 arrived last, at its instance's start (${JSON.stringify(last)})`);
  const late = xOf(theirs.start);
  const y = (i) => ({ y0: AXIS_H + i * ROW_H, y1: AXIS_H + (i + 1) * ROW_H });
  check(await hasColour(ranks, 0, [255, 45, 85], { x0: late - 4, x1: late + 2, ...y(rank1) }), `ranks: rank 1's row marks the late start at x=${late.toFixed(1)}`);
  check(!(await hasColour(ranks, 0, [255, 45, 85], { x0: GUTTER, x1: cb.w, ...y(0) })), "ranks: rank 0 is not marked last");
  check(await hasColour(ranks, 0, [0, 229, 255], { x0: GUTTER, x1: cb.w, ...y(rank1) }), "ranks: rank 1's instance is outlined");
  await ranks.screenshot({ path: path.join(outDir, "views-ranks.png") });

  /* the theme: without host variables VS Code's dark fallbacks; on a page with JupyterLab's
   * variables (a light theme here) the view and its canvas follow them */
  const themed = async (page) => page.evaluate((r) => { const s = getComputedStyle(eval(r).querySelector(".nsys-views")); return [s.backgroundColor, s.color]; }, root);
  const below = { x0: 4, x1: 60, y0: 1, y1: 6 }; /* the axis row's gutter: the canvas's background */
  check(JSON.stringify(await themed(ranks)) === '["rgb(30, 30, 30)","rgb(204, 204, 204)"]', `theme: no host variables, the dark fallbacks (${await themed(ranks)})`);
  check(await hasColour(ranks, 0, [30, 30, 30], below), "theme: the canvas on the dark fallback");
  const lab = await open("ranks", "--jp-layout-color0: #fefefe; --jp-layout-color1: #f5f5f5; --jp-ui-font-color1: #101010; --jp-ui-font-color2: #555; --jp-border-color1: #bbb; --jp-border-color2: #e0e0e0; --jp-brand-color1: #1976d2;");
  await frames(lab);
  check(JSON.stringify(await themed(lab)) === '["rgb(254, 254, 254)","rgb(16, 16, 16)"]', `theme: JupyterLab's variables followed (${await themed(lab)})`);
  check(await hasColour(lab, 0, [254, 254, 254], below) && !(await hasColour(lab, 0, [30, 30, 30], below)), "theme: the canvas on JupyterLab's background");
  await lab.screenshot({ path: path.join(outDir, "views-ranks-jupyterlab-theme.png") });
} catch (e) {
  check(false, String(e?.stack ?? e));
} finally {
  await browser.close();
  server.close();
  host.stdin.end();
}
process.exit(failed ? 1 : 0);
