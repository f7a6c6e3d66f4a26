/* The client logic against the REAL nsys-ai server over stdio. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { NsysClient, CancellationTokenSource, ResponseError } from '../../src/client/nsysClient';
import { collectingLogger } from '../../src/client/logger';
import { TimelineModel, resolutionFor, tileRequest, TILE_PX, MAX_EVENTS } from '../../src/client/timelineModel';
import { BUCKET_DETAIL_FIELDS, attachLongest, decodeTracks } from '../../src/client/tileColumns';
import { toColumns } from './objectsToColumns';
import { profileSpan, type WorkDoneProgress, type RangeColumns, type RangeParams } from '../../src/protocol/types';
import { serverBinary, smallProfile, NO_SERVER, NO_PROFILE, REPO_ROOT } from '../helpers';
import { SourceIndex } from '../../src/client/sourceModel';
import { hoverMarkdown } from '../../src/client/hoverText';
import { lensTitle } from '../../src/client/format';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';

const bin = serverBinary();
const logs: string[] = [];
let client: NsysClient;
let noServe: string | undefined;

function skipUnless(method: string, t: { skip: (m: string) => void }): boolean {
  if (noServe) { t.skip(noServe); return true; }
  assert.ok(client.capabilities.includes(method), `the server lists ${method}`);
  return false;
}

before(async () => {
  if (!bin) return;
  client = new NsysClient({ command: bin, logger: collectingLogger(logs), maxRestarts: 0 });
  const err = await client.start().then(() => undefined, (e: unknown) => e);
  if (err) {
    await new Promise((r) => setTimeout(r, 100));
    /* only a binary that has no `serve` command yet is skipped; any other failure fails */
    if (logs.some((l) => l.includes("unknown command 'serve'"))) noServe = `${bin} has no 'serve' command yet`;
    else throw err;
  }
});
after(async () => { if (client) await client.dispose(); });

test('initialize lists the methods', { skip: !bin && NO_SERVER }, async (t) => {
  if (noServe) return t.skip(noServe);
  assert.ok(client.capabilities.length > 0);
  assert.ok(client.capabilities.includes('initialize') || client.capabilities.includes('profile/open'), client.capabilities.join(','));
});

test('unknown method is a JSON-RPC error, not a crash', { skip: !bin && NO_SERVER }, async (t) => {
  if (noServe) return t.skip(noServe);
  await assert.rejects(client.requestUntyped('no/such/method', {}), (e: unknown) => e instanceof ResponseError && e.code === -32601);
  assert.ok(client.capabilities.length > 0);
});

test('profile/open reports progress and opens', { skip: (!bin && NO_SERVER) || (!smallProfile() && NO_PROFILE) }, async (t) => {
  if (skipUnless('profile/open', t)) return;
  const seen: WorkDoneProgress[] = [];
  const r = await client.openProfile(smallProfile()!, { onProgress: (p) => seen.push(p) });
  assert.match(r.profileId, /\S/);
  assert.equal(typeof r.info, 'object');
  if (seen.length > 0) {
    assert.equal(seen[0]!.kind, 'begin');
    assert.equal(seen[seen.length - 1]!.kind, 'end');
  } else {
    t.diagnostic('server sent no $/progress for this open (index cached or not reported)');
  }
});

test('profile/open of a missing file is a clear error', { skip: !bin && NO_SERVER }, async (t) => {
  if (skipUnless('profile/open', t)) return;
  await assert.rejects(client.openProfile('/nonexistent/x.sqlite'), (e: unknown) => e instanceof ResponseError && e.code === -32001);
});

test('progress is delivered and cancellation answers -32800 promptly (serve --test-methods)', { skip: !bin && NO_SERVER }, async (t) => {
  if (noServe) return t.skip(noServe);
  const c = new NsysClient({ command: bin!, args: ['serve', '--test-methods'], logger: collectingLogger([]) });
  await c.start();
  try {
    const src = new CancellationTokenSource();
    const seen: WorkDoneProgress[] = [];
    const t0 = Date.now();
    const outcome = c.requestUntyped('test/sleep', { ms: 20_000 }, {
      token: src.token,
      onProgress: (p) => { seen.push(p); if (seen.length === 1) src.cancel(); },
    }).then(() => 'finished', (e: unknown) => e);
    const e = await outcome;
    assert.ok(e instanceof ResponseError, `cancelled request rejects (got ${String(e)})`);
    assert.equal(e.code, -32800);
    assert.ok(Date.now() - t0 < 5000, 'answered soon after the cancel');
    assert.equal(seen[0]!.kind, 'begin');
    /* and a request that runs to the end sees begin … end */
    const done: WorkDoneProgress[] = [];
    const r = await c.requestUntyped<{ sleptMs: number }>('test/sleep', { ms: 30 }, { onProgress: (p) => done.push(p) });
    assert.ok(r.sleptMs >= 30);
    assert.equal(done[0]!.kind, 'begin');
    assert.equal(done[done.length - 1]!.kind, 'end');
  } finally {
    await c.dispose();
  }
});

test('timeline tiles cover their range, at the asked resolution, with sound buckets', { skip: (!bin && NO_SERVER) || (!smallProfile() && NO_PROFILE) }, async (t) => {
  if (skipUnless('timeline/range', t)) return;
  const { profileId, info } = await client.openProfile(smallProfile()!);
  const tracks = await client.tracks(profileId);
  assert.ok(tracks.tracks.length > 0);
  const span = profileSpan(info);
  assert.ok(span, 'the small profile has a span');
  const start = Number(span.start), end = Number(span.end); /* a small clock: exact as numbers */
  const fields = (f: readonly string[] | undefined) => f && ([...f] as RangeParams['fields']);
  const model = new TimelineModel((p) => client.range({ profileId, ...p, fields: fields(p.fields) }).then(decodeTracks), () => {}, 64, { start, end });
  const view = { start, end, width: 1024 };
  await model.ensure(view, 0);
  const tiles = model.tilesToDraw(view);
  assert.ok(tiles.length > 0);
  const want = resolutionFor(end - start, 1024);
  let events = 0, buckets = 0;
  for (const tile of tiles) {
    assert.equal(tile.result.resolution, want, 'server resolution = client resolution');
    assert.ok(tile.result.start <= tile.start && tile.result.end >= tile.end, 'response covers the tile');
    const r = tile.result, R = r.resolution;
    assert.equal(r.format, 'columns');
    /* the tile's buckets as drawn (index from indexStep, busyPct), then their count and longest op asked as the timeline asks them */
    const more = decodeTracks(await client.range({ profileId, ...tileRequest(tile), fields: fields(BUCKET_DETAIL_FIELDS) }));
    for (const tr of r.tracks) {
      if ('buckets' in tr) {
        const b = tr.buckets;
        const from = more.tracks.find((x) => x.id === tr.id);
        assert.ok(from && 'buckets' in from && attachLongest(b, from.buckets), 'the bucket columns asked after drawing are the same buckets');
        const L = b.longest!;
        const n = b.index.length;
        for (const col of [b.busyPct, L.count, L.id, L.name, L.dur]) assert.equal(col.length, n, 'columns of equal length');
        for (let j = 0; j < n; j++) {
          buckets++;
          assert.ok(b.busyPct[j]! <= 100, 'busy ≤ bucket width');
          assert.ok(L.count[j]! >= 0 && b.busyPct[j]! >= 0 && (j === 0 || b.index[j]! > b.index[j - 1]!));
          if (L.count[j]! > 0) assert.ok(L.id[j]! >= 0 && L.dur[j]! >= 0 && typeof L.names[L.name[j]!] === 'string', 'a bucket with items names its longest');
          assert.equal((r.start + b.index[j]! * R - tile.start) % want, 0, 'bucket edges on the resolution grid');
        }
      } else {
        const e = tr.events;
        for (let j = 0; j < e.id.length; j++) {
          events++;
          assert.ok(e.end[j]! >= e.start[j]! && e.end[j]! >= tile.start && e.start[j]! < tile.end);
          assert.equal(typeof r.names[e.name[j]!], 'string');
        }
      }
    }
    /* the same tile in the objects format, converted by the test, says the same */
    const objects = await client.range({ profileId, start: tile.start, end: tile.end, width: TILE_PX, maxEvents: MAX_EVENTS });
    assert.deepEqual(resolved(toColumns(objects)), resolved(r), 'columns decode like objects');
  }
  assert.ok(events + buckets > 0, 'something to draw');
  /* a zoomed-in tile at a finer resolution */
  const mid = (start + end) / 2;
  const zoom = { start: mid, end: mid + (end - start) / 64, width: 1024 };
  const before = model.requests;
  await model.ensure(zoom, 0);
  assert.ok(model.requests > before);
  assert.ok(model.tilesToDraw(zoom).every((x) => x.result.resolution === resolutionFor(zoom.end - zoom.start, 1024)));
  assert.equal(TILE_PX, 512);
});

test('the server is restarted after a crash and profiles are reopened', { skip: (!bin && NO_SERVER) || (!smallProfile() && NO_PROFILE) }, async (t) => {
  const lines: string[] = [];
  if (noServe) return t.skip(noServe);
  const c = new NsysClient({ command: bin!, logger: collectingLogger(lines), maxRestarts: 1 });
  await c.start();
  const { profileId } = await c.openProfile(smallProfile()!);
  const reopened = new Promise<Map<string, string>>((r) => c.onProfilesReopened(r));
  const events: string[] = [];
  c.server.onEvent((e) => events.push(e.type === 'crashed' ? `crashed:${e.willRestart}` : e.type));
  process.kill(c.server.pid!, 'SIGKILL');
  const remap = await reopened;
  assert.ok(remap.has(profileId), 'the open profile came back');
  assert.deepEqual(events.slice(0, 2), ['crashed:true', 'started']);
  assert.ok(lines.some((l) => l.includes('server died')));
  /* second crash within the window: the limit (1) is reached */
  const gaveUp = new Promise<boolean>((r) => c.server.onEvent((e) => { if (e.type === 'crashed') r(e.willRestart); }));
  process.kill(c.server.pid!, 'SIGKILL');
  assert.equal(await gaveUp, false);
  assert.ok(lines.some((l) => l.includes('giving up')));
  await c.dispose();
});

test('source: map → lens titles and heat; kernelsAt → hover markdown agree (profile with path:line NVTX tags)', { skip: !bin && NO_SERVER }, async (t) => {
  if (skipUnless('source/map', t) || skipUnless('source/kernelsAt', t)) return;
  const gen = nodePath.join(REPO_ROOT, 'tools', 'gen_profile.py');
  if (!fs.existsSync(gen)) return t.skip('tools/gen_profile.py is missing');
  const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), 'nsys-ai-src-'));
  try {
    const prof = nodePath.join(dir, 'tagged.sqlite');
    execFileSync('python3', [gen, '--preset', 'small', '--source-tags', '-o', prof], { stdio: 'pipe' });
    const ws = nodePath.join(dir, 'ws');
    fs.mkdirSync(ws);
    const { profileId } = await client.openProfile(prof);
    const map = await client.sourceMap(profileId, ws);
    assert.ok(map.files.length > 0, 'tagged ranges map to files');
    const idx = new SourceIndex(map, ws);
    const f = map.files[0]!;
    const hottest = [...f.lines].sort((a, b) => b.totalNs - a.totalNs)[0]!;
    const stat = idx.at(nodePath.join(ws, f.file), hottest.line)!;
    assert.equal(stat.count, hottest.count);
    assert.match(lensTitle(stat.count, stat.totalNs, stat.pctGpu), /^\d+ kernels? · .+ · .+% GPU$/);
    const at = await client.kernelsAt(profileId, f.file, hottest.line, ws);
    assert.equal(at.count, hottest.count, 'kernelsAt agrees with source/map');
    assert.equal(at.totalNs, hottest.totalNs);
    const md = hoverMarkdown('tagged.sqlite', profileId, at);
    assert.ok(md.includes(at.kernels[0]!.name.slice(0, 20)));
    assert.match(md, /Show in timeline\]\(command:nsys-ai\.showInTimeline\?/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('source/annotate edits apply cleanly and are idempotent', { skip: !bin && NO_SERVER }, async (t) => {
  if (skipUnless('source/annotate', t)) return;
  const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), 'nsys-ai-ann-'));
  try {
    const file = nodePath.join(dir, 'train.py');
    const src = 'import torch\n\ndef step(x):\n    y = x * 2\n    return y\n';
    fs.writeFileSync(file, src);
    const r = await client.annotate({ file, workspaceRoot: dir, scope: { function: 'step' }, granularity: 'function' });
    assert.ok(r.edits.length > 0);
    const out = applyEdits(src, r.edits);
    assert.match(out, /with torch\.cuda\.nvtx\.range\("train\.py:3 step"\):  # nsys-ai/);
    const again = await client.annotate({ file, workspaceRoot: dir, scope: { function: 'step' }, granularity: 'function', text: out });
    assert.equal(again.edits.length, 0, 'annotating twice adds nothing');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Applies non-overlapping LSP edits (0-based lines, UTF-16 characters) as VS Code would. */
function applyEdits(text: string, edits: Array<{ range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }>): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const off = (p: { line: number; character: number }) => (p.line < starts.length ? starts[p.line]! + p.character : text.length);
  return [...edits].sort((a, b) => off(b.range.start) - off(a.range.start))
    .reduce((s, e) => s.slice(0, off(e.range.start)) + e.newText + s.slice(off(e.range.end)), text);
}

/** A range answer with every name index replaced by its string (tables may order names differently). */
function resolved(r: RangeColumns) {
  const nm = (k: number) => (k < 0 ? null : r.names[k]);
  return { resolution: r.resolution, start: r.start, end: r.end, tracks: r.tracks.map((tr) => ('events' in tr
    ? { id: tr.id, events: { id: tr.events.id, start: tr.events.start, end: tr.events.end, name: tr.events.name.map(nm), kind: tr.events.kind.map(nm) } } /* no depth: the tiles do not ask it */
    : { id: tr.id, buckets: { index: tr.buckets.index, busyPct: tr.buckets.busyPct, longest: tr.buckets.longest && { ...tr.buckets.longest, names: undefined, name: tr.buckets.longest.name.map((k) => (k < 0 ? null : tr.buckets.longest!.names[k])) } } })) };
}
