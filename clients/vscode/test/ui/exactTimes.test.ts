/* Exact times on an epoch-clocked profile (times ~1.78e18, beyond 2^53, where
 * JSON.parse rounds to 256 ns): in a 10 ns window far from the origin a
 * kernel's first pixel is where SQL says it starts, and clicking it fills
 * Details with SQL's start and end digit for digit. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startHarness, CHROMIUM, type Harness } from './harness';
import { serverBinary, NO_SERVER, CLIENT_ROOT, REPO_ROOT } from '../helpers';

const bin = serverBinary();
const RESULTS = path.join(CLIENT_ROOT, 'test-results');
const GUTTER = 210, AXIS_H = 22, ROW_H = 22;
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
let hx: Harness | undefined;
let db = '';

/** Rows of a query as decimal strings (Python's sqlite3: integers exact). */
function sql(query: string): string[][] {
  const py = 'import json,sqlite3,sys\nc=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro",uri=True)\nprint(json.dumps([[str(x) for x in r] for r in c.execute(sys.argv[2])]))';
  return JSON.parse(execFileSync('python3', ['-c', py, db, query], { encoding: 'utf8' })) as string[][];
}

before(async () => {
  if (skip) return;
  db = path.join(os.tmpdir(), `nsys-ai-vscode-epoch-${process.pid}.sqlite`);
  try {
    execFileSync('python3', [path.join(REPO_ROOT, 'tools', 'gen_profile.py'), '--preset', 'small', '--epoch-clock', '-o', db], { stdio: 'pipe' });
  } catch (e) { skip = `gen_profile.py --epoch-clock failed: ${String(e)}`; return; }
  hx = await startHarness(bin!, db);
  fs.mkdirSync(RESULTS, { recursive: true });
});

after(async () => {
  await hx?.close();
  if (db) fs.rmSync(db, { force: true });
});

test('epoch clock: a 10 ns window draws the kernel at its pixel, Details shows SQL\'s digits', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  /* a kernel whose start a double would move by ≥ 64 ns, with nothing on its stream in the 50 ns before it */
  const [k] = sql(`SELECT k.start, k.end, k.deviceId, k.streamId FROM CUPTI_ACTIVITY_KIND_KERNEL k
    WHERE k.end - k.start > 50 AND k.start % 256 BETWEEN 64 AND 192
      AND NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL j WHERE j.deviceId = k.deviceId AND j.streamId = k.streamId
                      AND j.rowid <> k.rowid AND j.end >= k.start - 50 AND j.start <= k.start)
    ORDER BY k.start LIMIT 1 OFFSET 5`);
  assert.ok(k, 'such a kernel exists');
  const [start, end, dev, stream] = k as [string, string, string, string];
  assert.ok(BigInt(start) > 2n ** 53n, `an epoch clock: ${start}`);
  assert.notEqual(String(BigInt(Number(start))), start, 'a double would not hold this start');
  const rows = await page.evaluate(() => window.__nsysPerf.rowIds!());
  const row = rows.findIndex((id) => id === `gpu:${dev}:${stream}` || id.startsWith(`gpu:${dev}:${stream}:`));
  assert.ok(row >= 0, `a row for GPU ${dev} stream ${stream} in ${rows.join(' ')}`);
  const top = Math.max(0, (row - 2) * ROW_H);
  await page.evaluate((y) => { document.querySelector('.timeline')!.scrollTop = y; }, top);
  const scrolled = await page.evaluate(() => document.querySelector('.timeline')!.scrollTop);
  await page.evaluate(([s, e]) => window.__nsysPerf.show!(s!, e!), [String(BigInt(start) - 5n), String(BigInt(start) + 5n)]);
  /* every request answered, then two frames */
  await page.waitForFunction(() => document.querySelector('.timeline')!.getAttribute('data-resolution') === '1'
    && window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined), undefined, { timeout: 15_000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const width = await page.evaluate(() => document.querySelector('canvas')!.getBoundingClientRect().width);
  const xk = GUTTER + (width - GUTTER) / 2; /* start − 5 .. start + 5: the kernel begins mid-plot */
  const y = AXIS_H + row * ROW_H - scrolled + ROW_H / 2;
  const px = (xs: number[]) => page.evaluate(([yy, ...xx]) => {
    const c = document.querySelector('canvas')!, dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!;
    return xx.map((x) => Array.from(g.getImageData(Math.round(x! * dpr), Math.round(yy! * dpr), 1, 1).data).join(','));
  }, [y, ...xs]);
  const [farLeft, left, right, farRight] = await px([GUTTER + 10, xk - 15, xk + 15, width - 10]);
  await page.screenshot({ path: path.join(RESULTS, 'exact-times-10ns.png') });
  assert.equal(left, farLeft, 'before the kernel\'s start: the empty row');
  assert.notEqual(right, left, 'from the kernel\'s start on: the kernel');
  assert.equal(right, farRight, 'the kernel fills the rest of the window');
  /* a click on it selects it: Details shows the export's start and end, every digit */
  const box = (await page.locator('canvas').boundingBox())!;
  await page.mouse.click(box.x + xk + 15, box.y + y);
  await page.waitForFunction(() => [...document.querySelectorAll('.details th')].some((th) => th.textContent === 'Start (ns)'), undefined, { timeout: 15_000 });
  const kv = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.details tr')]
    .map((tr) => [tr.querySelector('th')?.textContent ?? '', tr.querySelector('td')?.textContent ?? ''])));
  assert.equal(kv['Start (ns)'], start);
  assert.equal(kv['End (ns)'], end);
  assert.equal(kv.start, start, 'All columns: start');
  assert.equal(kv.end, end, 'All columns: end');
  await page.screenshot({ path: path.join(RESULTS, 'exact-times-details.png') });
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});
