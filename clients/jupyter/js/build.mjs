// Bundles the widget front ends (anywidget ESM modules) into ../src/nsys_ai/static.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
await build({
  entryPoints: { timeline: path.join(here, "src/timeline.ts"), tree: path.join(here, "src/tree.ts") },
  outdir: path.join(here, "..", "src", "nsys_ai", "static"),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: process.env.NSYS_AI_MINIFY === "1",
  sourcemap: false,
  legalComments: "none",
  logLevel: "info",
});
