// Bundles the widget front ends (anywidget ESM modules) into ../src/nsys_ai_native/static.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import fs from "node:fs";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
// the VS Code views that views.ts renders: clients/vscode/src in the repo, js/vscode-src in the sdist
const viewsSrc = [path.join(here, "..", "..", "vscode", "src"), path.join(here, "vscode-src")].find((d) => fs.existsSync(d));
await build({
  entryPoints: { timeline: path.join(here, "src/timeline.ts"), tree: path.join(here, "src/tree.ts"), views: path.join(here, "src/views.ts") },
  outdir: path.join(here, "..", "src", "nsys_ai_native", "static"),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: process.env.NSYS_AI_MINIFY !== "0", // the widget module the page loads before its first frame: 112 KB -> 66 KB
  sourcemap: false,
  legalComments: "none",
  logLevel: "info",
  loader: { ".css": "text" }, // views.ts: the VS Code views' styles, into its shadow root
  alias: viewsSrc ? { "nsys-views": viewsSrc } : {},
});

// The test host that renders the widget outside JupyterLab (tests/browser/vscode_like):
// @jupyter-widgets/html-manager + @jupyterlab/services, bundled for the browser test only.
const hostDeps = path.join(here, "node_modules", "@jupyter-widgets", "html-manager");
if (process.env.NSYS_AI_HOST !== "0" && fs.existsSync(hostDeps)) {
  await build({
    entryPoints: [path.join(here, "..", "tests", "browser", "vscode_like", "host.ts")],
    outfile: path.join(here, "..", "build", "html-manager-host.js"),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: false,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
    nodePaths: [path.join(here, "node_modules")],
    banner: { js: "var __webpack_public_path__ = \"/\";" },
    loader: { ".css": "empty", ".woff": "empty", ".woff2": "empty", ".ttf": "empty", ".eot": "empty", ".svg": "empty" },
    define: { "process.env.NODE_ENV": '"production"', global: "window" },
  });
}
