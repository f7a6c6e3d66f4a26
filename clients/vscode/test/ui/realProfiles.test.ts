/* The real exports (../shared/profiles, see its PROVENANCE.tsv) in the real
 * webview, one page session, one profile after another (harness.reopen):
 * schemas 2021-2026, NCCL, NVTX only, CUDA graphs, callchains, failed or
 * partial captures, non-UTF-8 strings, many threads, no kernels. For each:
 * no page or console error; a profile with nothing to draw says so visibly;
 * every row in view whose tracks have ops in the first view (timeline/range
 * asked here, independently of the page) draws pixels in its band; the axis
 * labels are distinct at the first view, after 3 zoom-in steps and a pan, and
 * the span is shown; hovering an op shows its name, clicking it shows it in
 * Details (and a kernel's launch flow); searching that name (taken from the
 * server's answer) selects its matches with Enter / Shift+Enter.
 * CI runs a fixed varied subset (CI_SET); NSYS_AI_REAL_PROFILES=all runs all
 * of them and writes test-results/real-profiles.json (first-frame times). */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHarness, CHROMIUM, type Harness } from './harness';
import { serverBinary, NO_SERVER, CLIENT_ROOT, REPO_ROOT } from '../helpers';

const DIR = path.join(process.env.NSYS_AI_SHARED ?? path.join(REPO_ROOT, '..', 'shared'), 'profiles');
/** One of each shape (the whole set: NSYS_AI_REAL_PROFILES=all). */
const CI_SET = [
  'nsys2021_a100_cuda_callchains.sqlite', 'nsys2022_nvtx_only_negative_ts.sqlite', 'nsys2022_windows_10streams.sqlite',
  'nsys2025_h200_nvtx13k.sqlite', 'nsys2025_no_cuda_non_utf8.sqlite', 'nsys2026_2gpu_nccl_before.sqlite',
  'nsys_failed_capture_no_meta.sqlite', 'nsys2025_blackwell_3rows.sqlite',
];
const RESULTS = path.join(CLIENT_ROOT, 'test-results');
const AXIS_H = 22, ROW_H = 22, GUTTER = 210;
const bin = serverBinary();
const all = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((n) => n.endsWith('.sqlite')).sort() : [];
const chosen = process.env.NSYS_AI_REAL_PROFILES === 'all' ? all : all.filter((n) => CI_SET.includes(n));
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER
  : !chosen.length ? `no real profiles at ${DIR} (the exports listed in its PROVENANCE.tsv)` : false;
let hx: Harness | undefined;
const times: Array<{ profile: string; openMs: number; firstFrameMs: number | null; totalMs: number; tracks: number; drawn: string }> = [];

before(async () => {
  if (skip) return;
  hx = await startHarness(bin!, path.join(DIR, chosen[0]!), { width: 1280, height: 800 });
  fs.mkdirSync(RESULTS, { recursive: true });
});
after(async () => {
  if (times.length) fs.writeFileSync(path.join(RESULTS, 'real-profiles.json'), JSON.stringify(times, null, 2));
  await hx?.close();
});

type Row = { key: string; open: boolean | undefined; y: number; ids: string[] };
type Axis = { base: string; labels: string[]; span: string; cursor: string };

for (const [i, name] of chosen.entries()) {
  test(`real export ${name}: drawn, axis, hover, details, search`, async (t) => {
    if (skip) return t.skip(skip);
    const h = hx!;
    if (i > 0) await h.page.mouse.move(1, 1); /* off the canvas: no hover carried into the next profile */
    const t0 = performance.now();
    if (i > 0) await h.reopen(path.join(DIR, name));
    const openMs = i > 0 ? performance.now() - t0 : NaN;
    const { page, client, opened } = h;
    const errors = () => h.logs.filter((l) => l.startsWith('pageerror') || l.startsWith('console.error'));
    await page.waitForFunction(() => document.querySelector('.timeline[data-rendered="true"]')
      || (!document.querySelector('.timeline') && (document.getElementById('app')?.innerText ?? '').trim().length > 0), undefined, { timeout: 60_000 });
    const totalMs = performance.now() - t0;
    const tracks = (await client.request('timeline/tracks', { profileId: opened.profileId })).tracks;
    const rendered = await page.locator('.timeline[data-rendered="true"]').count() > 0;
    const record = (drawn: string, firstFrameMs: number | null) => times.push({ profile: name, openMs, firstFrameMs, totalMs, tracks: tracks.length, drawn });
    const span = opened.info.span as { start: number | string; end: number | string } | null;
    if (!span || tracks.length === 0) {
      /* nothing to draw: a message says so, visibly (not a blank page) */
      const text = (await page.locator('#app').innerText()).trim();
      assert.ok(/no timed activity|nothing to draw|no timeline/i.test(text), `${name}: a visible message, not ${JSON.stringify(text.slice(0, 200))}`);
      assert.equal(rendered, false, `${name}: no empty timeline drawn`);
      record('message', null);
      assert.deepEqual(errors(), []);
      return;
    }
    assert.ok(rendered, `${name}: the timeline drew its first frame`);
    const firstFrameMs = await page.evaluate(() => window.__nsysPerf.firstFrameMs ?? null);
    record('timeline', firstFrameMs);
    const canvas = page.locator('.timeline canvas');
    const box = (await canvas.boundingBox())!;
    const gutter = Number(await page.getAttribute('.timeline', 'data-gutter')) || GUTTER; /* set once dragged */

    /* rows in view whose tracks have ops in the first view (asked of the server here) draw in their band;
     * again scrolled to the last rows (many threads: the rows below the first screen) */
    const plotW = Math.floor(box.width - gutter);
    const rowsDrawn = async (where: string): Promise<Row[]> => {
      const rows = (await page.evaluate(() => window.__nsysPerf.rowsAt!())) as Row[];
      const inView = rows.filter((r) => r.y >= AXIS_H && r.y + ROW_H <= box.height && r.ids.length);
      assert.ok(inView.length > 0, `${name}: rows in view ${where}`);
      const ids = [...new Set(inView.flatMap((r) => r.ids))];
      const range = await client.requestUntyped<{ tracks: Array<{ id: string; events?: unknown[]; buckets?: unknown[] }> }>('timeline/range',
        { profileId: opened.profileId, start: span.start, end: span.end, width: plotW, tracks: ids, maxBytes: 1 << 30 });
      const withOps = new Set(range.tracks.filter((tr) => (tr.events?.length ?? 0) + (tr.buckets?.length ?? 0) > 0).map((tr) => tr.id));
      const paint = () => page.evaluate(({ bands, gutter }) => {
        const c = document.querySelector('.timeline canvas') as HTMLCanvasElement;
        const dpr = window.devicePixelRatio || 1;
        const ctx = c.getContext('2d')!;
        return bands.map((y) => {
          /* from the plot's first pixel column (an op at the profile's very start is drawn there) */
          const d = ctx.getImageData(Math.floor(gutter * dpr), Math.floor((y + 3) * dpr), c.width - Math.floor(gutter * dpr), Math.floor((22 - 6) * dpr)).data;
          /* the band's commonest colour is its background; count pixels far from it */
          const freq = new Map<number, number>();
          for (let k = 0; k < d.length; k += 4) { const v = (d[k]! << 16) | (d[k + 1]! << 8) | d[k + 2]!; freq.set(v, (freq.get(v) ?? 0) + 1); }
          const bg = [...freq.entries()].sort((a, b) => b[1] - a[1])[0]![0];
          let n = 0;
          for (let k = 0; k < d.length; k += 4) {
            if (Math.abs(d[k]! - (bg >> 16)) + Math.abs(d[k + 1]! - ((bg >> 8) & 255)) + Math.abs(d[k + 2]! - (bg & 255)) > 60) n++;
          }
          return n;
        });
      }, { bands: inView.map((r) => r.y), gutter });
      const blankOf = (painted: number[]) => inView.filter((r, k) => r.ids.some((id) => withOps.has(id)) && painted[k]! === 0).map((r) => r.key);
      let blank = blankOf(await paint());
      /* rows scrolled into view are asked then (their blocks' tiles): a few frames */
      for (let t = 0; t < 30 && blank.length && where !== 'at the first view'; t++) { await page.waitForTimeout(100); blank = blankOf(await paint()); }
      assert.deepEqual(blank, [], `${name}: rows with ops ${where} draw nothing (${inView.length} rows in view)`);
      return inView.filter((r) => r.ids.some((id) => withOps.has(id)));
    };
    const inView = await rowsDrawn('at the first view'); /* (those with ops: the hover below looks there) */
    assert.ok(inView.length > 0, `${name}: some row in view has ops`);
    const scrolls = await page.evaluate(() => { const el = document.querySelector('.timeline') as HTMLElement; return el.scrollHeight - el.clientHeight; });
    t.diagnostic(`${name}: ${(await page.evaluate(() => window.__nsysPerf.rowIds!().length))} rows, ${scrolls} px below the first screen`);
    if (scrolls > ROW_H) {
      await page.evaluate(() => { const el = document.querySelector('.timeline') as HTMLElement; el.scrollTop = el.scrollHeight; });
      await page.waitForTimeout(100);
      await rowsDrawn('scrolled to the last rows');
      await page.evaluate(() => { (document.querySelector('.timeline') as HTMLElement).scrollTop = 0; });
      await page.waitForTimeout(100);
    }

    /* the axis: distinct labels at the first view, after each of 3 zoom-in steps and a pan; the span shown */
    const axis = async (): Promise<Axis> => JSON.parse((await page.getAttribute('.timeline', 'data-axis')) ?? '{}') as Axis;
    await canvas.focus();
    for (const key of ['', '+', '+', '+', 'd']) {
      if (key) { await page.keyboard.press(key); await page.waitForTimeout(60); }
      const a = await axis();
      assert.ok(a.labels.length >= 2, `${name} after '${key}': ${a.labels.length} ticks`);
      assert.equal(new Set(a.labels).size, a.labels.length, `${name} after '${key}': repeated labels ${a.labels.join(' | ')} (base ${a.base})`);
      assert.match(a.span, /^span \d/, `${name}: the span shown`);
    }
    await page.keyboard.press('Home');
    await page.waitForFunction(() => document.querySelector('.timeline[data-rendered="true"]'));
    await page.waitForTimeout(150);

    /* hover an op (a GPU op when there is one): the tooltip names it. Buckets whose longest op
     * is not held yet hit nothing: the pointer over one asks for it (then it hits). */
    const find = () => page.evaluate(({ bands, gutter, width }) => {
      let any: { px: number; py: number; name: string; gpu: boolean; id: number; kind: string } | undefined;
      for (const y of bands) for (let px = gutter + 2; px < width; px += 2) {
        const hit = window.__nsysPerf.hit!(px, y + 11);
        if (hit && hit.name) {
          if (hit.gpu) return { px, py: y + 11, name: hit.name, gpu: true, id: hit.id, kind: hit.kind };
          any ??= { px, py: y + 11, name: hit.name, gpu: false, id: hit.id, kind: hit.kind };
          break;
        }
      }
      return any;
    }, { bands: inView.map((r) => r.y), gutter, width: box.width });
    let spot = await find();
    if (!spot) {
      const lacking = await page.evaluate(({ bands, gutter, width }) => {
        for (const y of bands) for (let px = gutter + 2; px < width; px += 2) if (window.__nsysPerf.lacking!(px, y + 11) > 0) return { px, py: y + 11 };
        return undefined;
      }, { bands: inView.map((r) => r.y), gutter, width: box.width });
      if (lacking) {
        await page.mouse.move(box.x + lacking.px, box.y + lacking.py);
        await page.waitForFunction(({ px, py }) => window.__nsysPerf.hit!(px, py) !== undefined, lacking, { timeout: 15_000 });
        spot = await find();
      }
    }
    assert.ok(spot, `${name}: an op under the pointer somewhere in view`);
    await page.mouse.move(box.x + spot.px, box.y + spot.py);
    /* (mousemove is frame-aligned: a tooltip of where the pointer was may show until it runs) */
    await page.waitForFunction(({ n, gpu }) => {
      const tip = document.querySelector<HTMLElement>('.tooltip');
      return !!tip && !tip.hidden && (!gpu || tip.dataset.details === 'true') && tip.querySelector('.tip-name')?.textContent === n;
    }, { n: spot.name, gpu: spot.gpu }, { timeout: 15_000 }).catch(async () => {
      assert.equal(await page.textContent('.tooltip .tip-name'), spot.name, `${name}: tooltip`);
    });

    /* click: Details names it; a kernel launched by an API call has its flow drawn */
    await page.mouse.click(box.x + spot.px, box.y + spot.py);
    await page.waitForFunction((n) => document.querySelector('.details h2')?.textContent === n, spot.name, { timeout: 30_000 });
    if (spot.gpu) {
      const d = await client.requestUntyped<{ api?: unknown }>('kernel/details', { profileId: opened.profileId, kernelId: spot.id });
      if (d.api) await page.waitForFunction(() => ((document.querySelector('.timeline') as HTMLElement).dataset.flow ?? '') !== '', undefined, { timeout: 15_000 });
    }

    /* search that name (a glob-free part of it): Enter / Shift+Enter select the server's matches in order */
    const query = spot.name.split(/[*?[\]]/).sort((a, b) => b.length - a.length)[0]!.trim();
    const kinds = spot.kind === 'kernel' || spot.kind === 'nvtx' ? undefined : ['kernel', 'nvtx', 'memcpy', 'memset', 'api'];
    if (kinds) await page.selectOption('.search-kinds', { label: 'all' });
    const ref = await client.requestUntyped<{ instances: { total: number; items: Array<{ id: number; kind: string }> } }>('search',
      { profileId: opened.profileId, query, limit: 1, instances: 2, ...(kinds ? { kinds } : {}) });
    assert.ok(ref.instances.total >= 1, `${name}: the server finds "${query}"`);
    const total = ref.instances.total.toLocaleString('en-US');
    await page.fill('.search-input', query);
    await page.press('.search-input', 'Enter');
    const steps: Array<[number, string]> = ref.instances.total > 1 ? [[0, ''], [1, 'Enter'], [0, 'Shift+Enter']] : [[0, '']];
    for (const [k, key] of steps) {
      if (key) await page.press('.search-input', key);
      await page.waitForSelector(`.search[data-counter="${k + 1} of ${total}"]`, { timeout: 15_000 });
      const m = ref.instances.items[k]!;
      await page.waitForFunction((want) => (document.querySelector('.timeline') as HTMLElement).dataset.match === want, `${m.kind}:${m.id}`, { timeout: 15_000 });
    }
    await page.press('.search-input', 'Escape');
    assert.deepEqual(errors(), [], `${name}: page errors`);
  });
}
