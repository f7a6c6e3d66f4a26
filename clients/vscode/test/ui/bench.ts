/* Manual benchmark (not a test): NSYS_AI_BIN=... node out/test/ui/bench.js PROFILE */
import { startHarness } from './harness';
(async () => {
  const hx = await startHarness(process.env.NSYS_AI_BIN!, process.argv[2]!);
  await hx.page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 120_000 });
  const r = await hx.page.evaluate(() => {
    const out: number[] = [];
    for (let i = 0; i < 15; i++) out.push(window.__nsysPerf.redraw!());
    const buckets = 0;
    return { draws: out.map((x) => Math.round(x * 10) / 10), buckets };
  });
  console.log(JSON.stringify(r));
  const prof = await hx.page.evaluate(async () => {
    // @ts-ignore
    const t = performance.now(); for (let i = 0; i < 5; i++) getComputedStyle(document.body).getPropertyValue('--x'); return performance.now() - t;
  });
  console.log('cssVar x5', prof);
  await hx.close();
})();
