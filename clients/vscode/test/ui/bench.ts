/* The timeline's speed bench (not a test): the real webview bundle in headless
 * Chromium behind the UI-test harness, a real `nsys-ai serve` behind it.
 *
 *   npm run bench -- PROFILE.sqlite [--loads N] [--hovers N] [--bridge cdp|http|mixed] [--json FILE]
 *
 * The harness opens the profile first (index built or loaded from its cache,
 * then held by the server), and the page is loaded once to warm everything;
 * each measured load is then a page reload, so "first frame" is the index-warm
 * time from the webview receiving `init` to the first complete full-range frame
 * (every visible row drawn from exact-resolution tiles). Then a scripted
 * pan/zoom sequence (wheel, drag, keys) times each frame's draw() and the
 * latency from the input event to the end of the frame that shows it, and
 * ~50 hovers on different kernels time the mousemove event (its timestamp) to
 * the tooltip showing kernel/details (server round trip included). Search:
 * a query's first match (Enter in the search box → the counter shows it, the
 * server scanning every kernel and NVTX range) for a few queries, then Enter /
 * Shift+Enter steps (→ the next match shown; a page of 500 matches asked for
 * when a step leaves the page held, e.g. wrapping to the last). An empty bridge round
 * trip (a method the host refuses without asking the server) and a trivial
 * server round trip (profile/info) are timed in the same run: the harness's
 * bridge is JSON text over the Chrome DevTools Protocol, a stand-in for VS
 * Code's postMessage, so read the hover figure against them. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startHarness, type Harness } from './harness';
import { serverBinary, NO_SERVER, CLIENT_ROOT } from '../helpers';

interface Stats { n: number; p50: number; p95: number; p99: number; max: number }

function stats(a: number[]): Stats {
  const s = [...a].sort((x, y) => x - y);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN);
  const r = (x: number) => Math.round(x * 100) / 100;
  return { n: s.length, p50: r(at(0.5)), p95: r(at(0.95)), p99: r(at(0.99)), max: r(s.length ? s[s.length - 1]! : NaN) };
}

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitRendered(hx: Harness, timeout: number): Promise<number> {
  await hx.page.waitForFunction(() => window.__nsysPerf?.firstFrameMs !== undefined, undefined, { timeout, polling: 20 });
  return hx.page.evaluate(() => window.__nsysPerf.firstFrameMs!);
}

/** Host-side timing of the requests made since `from` (server + stdio + node JSON parse; then the post to the page). */
function hops(hx: Harness, from: number, method: string) {
  const rs = hx.requests.slice(from).filter((r) => r.method === method && r.ms !== undefined);
  return {
    requests: rs.length,
    serverMs: stats(rs.map((r) => r.ms!)),
    postMs: stats(rs.filter((r) => r.postMs !== undefined).map((r) => r.postMs!)),
    bytes: rs.reduce((a, r) => a + (r.bytes ?? 0), 0),
  };
}

(async () => {
  const profile = process.argv[2];
  const bin = serverBinary();
  if (!profile || !fs.existsSync(profile)) { console.error('usage: npm run bench -- PROFILE.sqlite [--loads N] [--hovers N] [--bridge cdp|http|mixed] [--json FILE]'); process.exit(2); }
  if (!bin) { console.error(NO_SERVER); process.exit(2); }
  const loads = Number(arg('--loads', '3'));
  const nHovers = Number(arg('--hovers', '50'));
  const load0 = os.loadavg();
  const t0 = Date.now();
  const bridgeKind = (['cdp', 'http', 'mixed'] as const).find((k) => k === arg('--bridge', 'cdp')) ?? 'cdp';
  const hx = await startHarness(bin, profile, { width: 1280, height: 800 }, bridgeKind);
  const openMs = Date.now() - t0;
  const page = hx.page;
  try {
    /* warm-up load (the server's index is warm from here on) */
    const warmMs = await waitRendered(hx, 600_000);
    const first: number[] = [];
    let loadHops = hops(hx, 0, 'timeline/range');
    for (let i = 0; i < loads; i++) {
      const from = hx.requests.length;
      await page.reload();
      first.push(await waitRendered(hx, 120_000));
      await sleep(300); /* prefetch settles */
      if (i === loads - 1) loadHops = hops(hx, from, 'timeline/range');
    }
    /* the last load's requests as the webview saw them, ms after it received init */
    const loadTimeline = await page.evaluate(() => {
      const p = window.__nsysPerf, t0 = p.openedAt ?? 0, r = (x?: number) => (x === undefined ? null : Math.round((x - t0) * 10) / 10);
      return { requests: (p.rpcTimings ?? []).filter((x) => x.sent <= t0 + p.firstFrameMs!).map((x) => ({ method: x.method, sent: r(x.sent), settled: r(x.settled) })), initAt: Math.round(t0 * 10) / 10, firstFrame: Math.round(p.firstFrameMs! * 10) / 10, firstFrameDraw: Math.round((p.firstFrameDrawMs ?? NaN) * 10) / 10 };
    });

    /* bridge costs: empty round trip (refused by the host, no server), trivial server round trip */
    const fromBridge = hx.requests.length;
    const bridge = await page.evaluate(async () => {
      const rpc = window.__nsysPerf.rpc!;
      await new Promise((r) => setTimeout(r, 300));
      const time = async (m: string) => {
        const out: number[] = [];
        for (let i = 0; i < 40; i++) { const t = performance.now(); await rpc(m, {}).catch(() => {}); out.push(performance.now() - t); }
        return out;
      };
      /* the first frame's first tile again (the same bytes), ten times */
      const tile = window.__nsysPerf.rpcTimings!.find((x) => x.method === 'timeline/range')!.params;
      const big: number[] = [];
      for (let i = 0; i < 10; i++) { const t = performance.now(); await rpc('timeline/range', tile); big.push(performance.now() - t); }
      return { empty: await time('bench/none'), info: await time('profile/info'), big };
    });
    const bigHops = hops(hx, fromBridge, 'timeline/range');

    /* pan/zoom: scripted wheel, drag and key steps at ~60 Hz input */
    const box = (await page.locator('canvas').boundingBox())!;
    const GUTTER = 210;
    await page.locator('canvas').focus();
    await page.evaluate(() => { window.__nsysPerf.frames.length = 0; window.__nsysPerf.inputToFrame.length = 0; });
    const cx = box.x + GUTTER + (box.width - GUTTER) * 0.4, cy = box.y + Math.min(22 + 11 * 22, (box.height + 22) / 2); /* inside the canvas, also with few rows */
    await page.mouse.move(cx, cy);
    await page.keyboard.down('Control'); /* Ctrl+wheel zooms (the wheel alone pans) */
    for (let i = 0; i < 12; i++) { await page.mouse.wheel(0, -240); await sleep(16); }
    await page.keyboard.up('Control');
    await page.mouse.down();
    for (let i = 1; i <= 40; i++) { await page.mouse.move(cx - i * 12, cy); await sleep(16); }
    await page.mouse.up();
    for (let i = 0; i < 8; i++) { await page.keyboard.press(i < 4 ? 'ArrowRight' : 'ArrowLeft'); await sleep(16); }
    for (let i = 0; i < 6; i++) { await page.keyboard.press(i % 2 ? '-' : '+'); await sleep(16); }
    await page.mouse.move(cx + 150, cy);
    await page.keyboard.down('Control');
    for (let i = 0; i < 14; i++) { await page.mouse.wheel(0, 240); await sleep(16); }
    await page.keyboard.up('Control');
    await page.mouse.down();
    for (let i = 1; i <= 30; i++) { await page.mouse.move(cx + 150 + i * 15, cy); await sleep(16); }
    await page.mouse.up();
    await sleep(500);
    const panZoom = await page.evaluate(() => ({ frames: [...window.__nsysPerf.frames], inputToFrame: [...window.__nsysPerf.inputToFrame] }));

    /* hovers: distinct kernels at the full range (bucket longest items) and zoomed in (events) */
    await page.keyboard.press('Home');
    await sleep(1500);
    const hoverFrom = hx.requests.length;
    await page.evaluate(() => { window.__nsysPerf.hovers.length = 0; });
    const pickTargets = () => page.evaluate(({ n, gutter, w }) => {
      const seen = new Set<number>(), out: Array<[number, number]> = [];
      for (let step = 0; out.length < n && step < 4000; step++) {
        const px = gutter + 5 + ((step * 97) % (w - gutter - 10)), py = 22 + 11 + 22 * (step % 16);
        const id = window.__nsysPerf.probe!(px, py);
        if (id !== undefined && !seen.has(id)) { seen.add(id); out.push([px, py]); }
      }
      return out;
    }, { n: Math.ceil(nHovers / 2), gutter: GUTTER, w: box.width });
    const hoverAll = async (targets: Array<[number, number]>) => {
      for (const [px, py] of targets) {
        const before = await page.evaluate(() => window.__nsysPerf.hovers.length);
        await page.mouse.move(box.x + px, box.y + py);
        await page.waitForFunction((b) => window.__nsysPerf.hovers.length > b, before, { timeout: 5000, polling: 5 }).catch(() => {});
        await sleep(30);
      }
    };
    await hoverAll(await pickTargets());
    /* zoomed in 1000x around the middle: individual kernels */
    await page.mouse.move(box.x + GUTTER + (box.width - GUTTER) / 2, box.y + 40);
    await page.keyboard.down('Control');
    for (let i = 0; i < 38; i++) await page.mouse.wheel(0, -100);
    await page.keyboard.up('Control');
    await sleep(2000);
    await hoverAll(await pickTargets());
    const hovers = await page.evaluate(() => [...window.__nsysPerf.hovers]);
    /* for reference: a Chrome DevTools Protocol round trip (the other way a harness can reach a page) */
    const cdp: number[] = [];
    for (let i = 0; i < 40; i++) { const t = performance.now(); await page.evaluate(() => 0); cdp.push(performance.now() - t); }
    const detailsHops = hops(hx, hoverFrom, 'kernel/details');

    /* search: a query's first match, then steps (Enter, Shift+Enter across the wrap) */
    await page.keyboard.press('Home');
    const searchFrom = hx.requests.length;
    const firstMatch: number[] = [];
    const queries = arg('--queries', 'gemm,nccl,*kernel*').split(',');
    for (const q of [...queries, ...queries]) {
      await page.fill('.search-input', q);
      const t = performance.now();
      await page.focus('.search-input');
      await page.evaluate(() => { (document.querySelector('.search') as HTMLElement).dataset.counter = ''; });
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => / of |^no matches/.test((document.querySelector('.search') as HTMLElement).dataset.counter ?? ''), undefined, { timeout: 120_000, polling: 5 })
        .catch(async (e) => { throw new Error(`${q}: counter ${await page.evaluate(() => (document.querySelector('.search') as HTMLElement).textContent)}: ${String(e)}`); });
      firstMatch.push(performance.now() - t);
    }
    await page.evaluate(() => { window.__nsysPerf.searchSteps = []; });
    for (let i = 0; i < 60; i++) { await page.keyboard.press(i % 20 === 19 ? 'Shift+Enter' : 'Enter'); await sleep(30); }
    for (let i = 0; i < 3; i++) { await page.keyboard.press('Home'); await page.focus('.search-input'); await page.fill('.search-input', queries[0]!); await page.keyboard.press('Enter'); await sleep(300); await page.keyboard.press('Shift+Enter'); await sleep(300); }
    await page.waitForFunction((n) => (window.__nsysPerf.searchSteps ?? []).length >= n, 63, { timeout: 60_000 });
    const searchSteps = await page.evaluate(() => [...(window.__nsysPerf.searchSteps ?? [])]);
    const searchHops = hops(hx, searchFrom, 'search');

    const load1 = os.loadavg();
    const report = {
      profile: path.resolve(profile),
      when: new Date().toISOString(),
      loadAverage: { before: load0.map((x) => +x.toFixed(2)), after: load1.map((x) => +x.toFixed(2)) },
      cpus: os.cpus().length,
      harnessOpenMs: openMs,
      bridge: bridgeKind,
      warmupFirstFrameMs: Math.round(warmMs),
      firstFrameMs: { runs: first.map((x) => Math.round(x)), ...stats(first) },
      firstFrameRange: loadHops,
      firstFrameTimeline: loadTimeline,
      panZoomDrawMs: stats(panZoom.frames),
      panZoomInputToFrameMs: stats(panZoom.inputToFrame),
      hoverMs: stats(hovers),
      hoverDetailsHostSide: detailsHops,
      searchFirstMatchMs: stats(firstMatch),
      searchStepMs: stats(searchSteps),
      searchHostSide: searchHops,
      bridgeEmptyRoundTripMs: stats(bridge.empty),
      bridgeProfileInfoRoundTripMs: stats(bridge.info),
      cdpEvaluateRoundTripMs: stats(cdp),
      bridgeTileRoundTripMs: stats(bridge.big),
      bridgeTileHostSide: bigHops,
    };
    const line = (name: string, s: Stats, target: string) => `${name.padEnd(42)} ${String(s.p50).padStart(9)} ${String(s.p95).padStart(9)} ${String(s.p99).padStart(9)} ${String(s.n).padStart(5)}   ${target}`;
    console.log(`profile ${report.profile}   load average ${report.loadAverage.before.join(' ')} → ${report.loadAverage.after.join(' ')} (${report.cpus} cpus)`);
    console.log(`${'measure (ms)'.padEnd(42)} ${'p50'.padStart(9)} ${'p95'.padStart(9)} ${'p99'.padStart(9)} ${'n'.padStart(5)}   target`);
    console.log(line('first full-range frame (index warm)', report.firstFrameMs, '≤ 150'));
    console.log(line('pan/zoom frame: draw()', report.panZoomDrawMs, '≤ 16'));
    console.log(line('pan/zoom frame: input event → frame drawn', report.panZoomInputToFrameMs, ''));
    console.log(line('hover: mousemove event → tooltip w/ details', report.hoverMs, '≤ 20'));
    console.log(line('  kernel/details host side (server+stdio)', report.hoverDetailsHostSide.serverMs, ''));
    console.log(line(`search: Enter → first match shown (${queries.join(' ')})`, report.searchFirstMatchMs, ''));
    console.log(line('search: Enter/Shift+Enter → next match shown', report.searchStepMs, ''));
    console.log(line('  search host side (server+stdio)', report.searchHostSide.serverMs, ''));
    console.log(line(`bridge empty round trip (harness ${bridgeKind})`, report.bridgeEmptyRoundTripMs, ''));
    console.log(line('CDP evaluate round trip (for reference)', report.cdpEvaluateRoundTripMs, ''));
    console.log(line('bridge profile/info round trip', report.bridgeProfileInfoRoundTripMs, ''));
    console.log(line(`bridge round trip of a first-frame tile (${(bigHops.bytes / bigHops.requests / 1e6).toFixed(2)} MB)`, report.bridgeTileRoundTripMs, ''));
    console.log(line('  of which host side (server+stdio+parse)', bigHops.serverMs, ''));
    console.log(line('first frame: timeline/range host side', loadHops.serverMs, ''));
    console.log(line(`first frame: post to page (${bridgeKind === 'cdp' ? 'stringify+CDP+parse' : 'stringify+write'})`, loadHops.postMs, ''));
    console.log(`first frame (ms after init): ${loadTimeline.requests.map((x) => `${x.method} ${x.sent}→${x.settled}`).join(', ')}, complete frame ${loadTimeline.firstFrame} (its draw() ${loadTimeline.firstFrameDraw})`);
    console.log(`page load: navigation → init received ${loadTimeline.initAt} ms (the part the profile editor overlaps with profile/open)`);
    console.log(`first frame: ${loadHops.requests} timeline/range requests, ${(loadHops.bytes / 1e6).toFixed(2)} MB JSON; warm-up load ${report.warmupFirstFrameMs} ms; harness open ${openMs} ms`);
    const out = arg('--json', path.join(CLIENT_ROOT, 'test-results', 'bench.json'));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(report, null, 2));
    console.log(JSON.stringify(report));
  } finally {
    if (process.env.NSYS_AI_BENCH_LOG) console.error(hx.logs.join('\n'));
    await hx.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
