// The timeline widget rendered by VS Code's own ipywidgets 8 widget manager
// (@vscode/jupyter-ipywidgets8's dist/ipywidgets.js, see host.ts), in headless Chromium: a
// page served at the Jupyter server's origin (playwright answers the test's own URLs, the rest
// is the real server), require.js, the VS Code bundle, a real kernel over the server's
// websocket, anywidget's front end loaded by the bundle's loader through require.js from the
// kernel environment's nbextensions. Checks what vscode_like/run.mjs checks
// (../timeline_checks.mjs): renders, wheel zoom answered in the columns format and drawn,
// click -> details; that no widget class failed to load and no page error happened; and, as
// VS Code's webview scrolls the notebook with wheel events an output lets through, that the
// zoom steps were not let through and a wheel over the track labels is.
//
//   node run.mjs NOTEBOOK_URL OUT_DIR IPYWIDGETS8_JS NBEXTENSIONS_DIR PROFILE
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkTimeline, finishRun, launchChromium } from "../timeline_checks.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeModules = process.env.NODE_MODULES_DIR;
const require = createRequire(path.join(nodeModules, "noop.js"));
const { chromium } = require("playwright-core");
const esbuild = require("esbuild");

const [nbUrl, outDir, preloadJs, nbextensions, profile] = process.argv.slice(2);
const u = new URL(nbUrl);
const token = u.searchParams.get("token");
fs.mkdirSync(outDir, { recursive: true });
const result = { ok: false, steps: [] };
const step = (name, data = {}) => {
  result.steps.push({ name, ...data });
  console.log(`[vscode-ipywidgets8] ${name} ${JSON.stringify(data)}`);
};

// The widget modules of the kernel environment and their entry points, read from each
// nbextensions/<dir>/extension.js's require.js map ("<module>": "nbextensions/<dir>/index"),
// as VS Code's extension host does for a local kernel.
const entryPoints = {};
for (const dir of fs.readdirSync(nbextensions)) {
  const ext = path.join(nbextensions, dir, "extension.js");
  if (!fs.existsSync(ext)) continue;
  for (const m of fs.readFileSync(ext, "utf8").matchAll(/["']?([@\w./-]+)["']?\s*:\s*["'](nbextensions\/[^"']+)["']/g)) {
    // ipywidgets' own modules are inside the VS Code bundle (its loader never asks for them)
    if (!m[1].startsWith("@jupyter-widgets/")) entryPoints[m[1]] = m[2].replace(/\.js$/, "");
  }
}
step("widget entry points", entryPoints);
if (!entryPoints.anywidget) throw new Error(`no anywidget entry point under ${nbextensions}`);

const hostJs = (await esbuild.build({
  entryPoints: [path.join(here, "host.ts")],
  bundle: true, write: false, format: "iife", platform: "browser", target: "es2020",
  legalComments: "none", logLevel: "warning", nodePaths: [nodeModules],
  define: { "process.env.NODE_ENV": '"production"', global: "window" },
})).outputFiles[0].text;

const userDataDir = fs.mkdtempSync(path.join(outDir, "chromium-profile-"));
const browser = await launchChromium(chromium, userDataDir);
let error;
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  const errors = [];
  let pageError; // rejects on the first uncaught error in the page: the checks stop at once
  const failed = new Promise((_, reject) => (pageError = reject));
  failed.catch(() => {});
  page.on("console", (m) => console.log(`[browser ${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => {
    console.log(`[browser pageerror] ${e.message}`);
    errors.push(e.message);
    pageError(new Error(`page error: ${e.message}`));
  });
  const js = (body) => (r) => r.fulfill({ contentType: "text/javascript", body });
  await page.route(`${u.origin}/nsys-vscode.html`, (r) => r.fulfill({ contentType: "text/html",
    body: '<!doctype html><meta charset="utf-8"><title>nsys-ai in VS Code\'s widget manager</title>' +
      '<body><div id="out"></div><script src="/vscode-preload/require.js"></script>' +
      '<script src="/nsys-vscode-host.js"></script></body>' }));
  await page.route(`${u.origin}/vscode-preload/require.js`, js(fs.readFileSync(path.join(nodeModules, "requirejs", "require.js"))));
  await page.route(`${u.origin}/vscode-preload/ipywidgets8.js`, js(fs.readFileSync(preloadJs)));
  await page.route(`${u.origin}/nsys-vscode-host.js`, js(hostJs));
  // the kernel environment's share/jupyter, read-only, only nbextensions/ (VS Code copies that
  // folder into its own storage and serves it to the webview)
  const served = [];
  await page.route(`${u.origin}/vscode-resource/jupyter/**`, (r) => {
    const rel = decodeURIComponent(new URL(r.request().url()).pathname).replace(/^\/vscode-resource\/jupyter\//, "");
    const file = path.resolve(nbextensions, rel.slice("nbextensions/".length));
    if (!rel.startsWith("nbextensions/") || !file.startsWith(path.resolve(nbextensions) + path.sep) ||
        !fs.statSync(file, { throwIfNoEntry: false })?.isFile()) {
      return r.fulfill({ status: 404, body: "not found" });
    }
    served.push(rel);
    return r.fulfill({ contentType: file.endsWith(".js") ? "text/javascript" : "application/octet-stream", body: fs.readFileSync(file) });
  });
  await page.goto(`${u.origin}/nsys-vscode.html`, { waitUntil: "load" });
  // VS Code picks the ipywidgets 8 bundle when the kernel's ipywidgets is 8.x: check that it is
  const code = "import ipywidgets\nassert ipywidgets.__version__.startswith('8.'), ipywidgets.__version__\n" +
    `import nsys_ai_native\np = nsys_ai_native.open(${JSON.stringify(profile)})\nw = p.show(height=360)\nw`;
  await page.evaluate((s) => window.nsysVscHost(s), { token, code, preloadUrl: "/vscode-preload/ipywidgets8.js",
    baseUrl: `${u.origin}/vscode-resource/jupyter/`, widgetEntryPoints: entryPoints });
  const hostErrors = await page.evaluate(() => window.nsysHostErrors);
  step("executed", { log: await page.evaluate(() => window.nsysHostLog), served });
  if (hostErrors.length) throw new Error(`host: ${hostErrors.join(" | ")}`);
  if (errors.length) throw new Error(`page errors: ${errors.join(" | ")}`);
  if (!served.includes(`${entryPoints.anywidget}.js`)) throw new Error("anywidget's module was not loaded through require.js");
  if (!(await page.evaluate(() => window.requirejs.defined("anywidget")))) throw new Error("require.js has no anywidget module");

  result.zoom = await Promise.race([failed, checkTimeline(page, { screenshot: path.join(outDir, "timeline-vscode-ipywidgets8.png"), step })]);
  // VS Code scrolls the notebook with every wheel event the output lets through: the zoom
  // steps over the plot must not be let through, a wheel over the track labels must be (it
  // scrolls the track list, or the notebook) and must not zoom
  const overPlot = await page.evaluate(() => window.nsysWheels.splice(0));
  if (!overPlot.length || overPlot.some((w) => !w.prevented)) {
    throw new Error(`wheel zoom steps not all default-prevented (VS Code would also scroll the notebook): ${JSON.stringify(overPlot)}`);
  }
  const tl = page.locator(".nsys-tl").first();
  const box = await tl.locator("canvas").boundingBox();
  const seq0 = await tl.evaluate((e) => e.dataset.viewSeq);
  await page.mouse.move(box.x + 60, box.y + 60);
  await page.mouse.wheel(0, 300);
  await page.waitForFunction(() => window.nsysWheels.length > 0, null, { timeout: 5000 });
  await page.waitForTimeout(300); // a zoom would have started by now
  const overLabels = await page.evaluate(() => window.nsysWheels.splice(0));
  const seq1 = await tl.evaluate((e) => e.dataset.viewSeq);
  step("wheel events as VS Code's webview sees them", { overPlot: overPlot.length, overLabels, viewSeq: [seq0, seq1] });
  if (overLabels.some((w) => w.prevented)) throw new Error("a wheel over the track labels was default-prevented (it would scroll nothing)");
  if (seq1 !== seq0) throw new Error("a wheel over the track labels zoomed the timeline");
  const late = await page.evaluate(() => window.nsysHostErrors);
  if (late.length) throw new Error(`host: ${late.join(" | ")}`);
  if (errors.length) throw new Error(`page errors: ${errors.join(" | ")}`);
  result.ok = true;
} catch (e) {
  error = e;
}
await finishRun("vscode-ipywidgets8", { browser, userDataDir, outDir, result, error });
