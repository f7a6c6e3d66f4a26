// What the widget benches' browser halves share (bench.mjs, bench_ux.mjs): a fixed pseudo-random
// sequence, so every run does the same inputs, and headless Chromium as they launch it.
import { createRequire } from "node:module";
import path from "node:path";

/** mulberry32: numbers in [0, 1), the same sequence for the same seed */
export function seeded(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A persistent-context headless Chromium (1600 x 1000) with its profile in userDataDir. */
export function launch(userDataDir) {
  const require = createRequire(path.join(process.env.NODE_MODULES_DIR, "noop.js"));
  const { chromium } = require("playwright-core");
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1600, height: 1000 },
  });
}

/** Ends the CDP trace `cdp` started (Tracing.start with transferMode ReturnAsStream) and returns its JSON text. */
export async function endTrace(cdp) {
  const done = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
  await cdp.send("Tracing.end");
  const { stream } = await done;
  const parts = [];
  for (;;) {
    const r = await cdp.send("IO.read", { handle: stream, size: 1 << 20 });
    parts.push(r.base64Encoded ? Buffer.from(r.data, "base64").toString() : r.data);
    if (r.eof) break;
  }
  await cdp.send("IO.close", { handle: stream });
  return parts.join("");
}
