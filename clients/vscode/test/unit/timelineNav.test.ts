/* client/timelineNav: the match cursor against a fake search (pages, wrap,
 * a start past the last match, a new query cancelling an old one), the window
 * cache of the outlines (reuse inside, refetch outside, dense views), the span
 * framing, and the drag window. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MatchCursor, WindowCache, dragWindow, frameSpan, KEYS, type Match, type MatchFetch, type WindowFetch } from '../../src/client/timelineNav';

/** A fake search over `n` matches at t = 10 i, counting its requests. */
function fake(n: number): { fetch: MatchFetch; asked: Array<Record<string, unknown>> } {
  const all: Match[] = Array.from({ length: n }, (_, i) => ({ kind: 'kernel', id: i, track: 'gpu:0:7', start: 10 * i, end: 10 * i + 5, name: 'k' }));
  const asked: Array<Record<string, unknown>> = [];
  return {
    asked,
    fetch: async (p) => {
      asked.push(p);
      const offset = p.at !== undefined ? all.filter((m) => m.start < p.at!).length : p.offset ?? 0;
      return { total: n, offset, items: all.slice(offset, offset + p.instances) };
    },
  };
}

test('the cursor starts at the first match at or after the view, steps, wraps and pages', async () => {
  const f = fake(1204);
  const c = new MatchCursor(f.fetch);
  assert.equal((await c.begin('k', 25))!.id, 3, 'first match starting at or after 25');
  assert.equal(c.counter(), '4 of 1,204');
  assert.equal((await c.step(-1))!.id, 2);
  for (let i = 0; i < 3; i++) await c.step(-1);
  assert.equal(c.index, 1203, 'wraps to the last');
  assert.equal(c.current()!.id, 1203);
  assert.equal((await c.step(1))!.id, 0, 'and back to the first');
  const before = f.asked.length;
  for (let i = 0; i < MatchCursor.PAGE; i++) await c.step(1);
  assert.equal(c.current()!.id, MatchCursor.PAGE);
  assert.ok(f.asked.length - before <= 2, 'a page per PAGE steps');
});

test('a start past the last match shows the last; no match and no query say so', async () => {
  const c = new MatchCursor(fake(7).fetch);
  assert.equal((await c.begin('k', 1000))!.id, 6);
  assert.equal(c.counter(), '7 of 7');
  const z = new MatchCursor(fake(0).fetch);
  assert.equal(await z.begin('k', 0), undefined);
  assert.equal(z.counter(), 'no matches');
  assert.equal(await z.step(1), undefined);
  assert.equal(await z.begin('', 0), undefined);
  assert.equal(z.counter(), '');
});

test('a newer query wins over an older one still in flight', async () => {
  let release: () => void = () => {};
  const slow: MatchFetch = (p) => new Promise((r) => { release = () => r({ total: 1, offset: 0, items: [{ kind: 'nvtx', id: 9, track: 't', start: 0, end: 1, name: p.query }] }); });
  const c = new MatchCursor(async (p) => (p.query === 'old' ? slow(p) : fake(3).fetch(p)));
  const old = c.begin('old', 0);
  assert.equal((await c.begin('new', 0))!.id, 0);
  release();
  assert.equal(await old, undefined);
  assert.equal(c.query, 'new');
  assert.equal(c.total, 3);
});

test('frameSpan frames with a margin inside the profile; dragWindow needs a few pixels', () => {
  assert.deepEqual(frameSpan(100, 200, { start: 0, end: 1000 }, 10), { start: 80, end: 220 });
  assert.deepEqual(frameSpan(0, 100, { start: 0, end: 1000 }, 10), { start: 0, end: 140 }, 'kept inside, same span');
  assert.deepEqual(frameSpan(500, 500, { start: 0, end: 1000 }, 1000), { start: 0, end: 1000 }, 'an instant: the minimum span');
  assert.deepEqual(dragWindow(30, 10, 1), { start: 10, end: 30 });
  assert.equal(dragWindow(10, 12, 1), undefined);
  assert.ok(KEYS.some(([k]) => k === '?'));
});

test('WindowCache: views inside the window fetched ask nothing; outside, another query or a dense window asks again', async () => {
  // matches at t = 10 i, lasting 5
  const all: Match[] = Array.from({ length: 1000 }, (_, i) => ({ kind: 'kernel', id: i, track: 'gpu:0:7', start: 10 * i, end: 10 * i + 5, name: 'k' }));
  const asked: Array<[number, number]> = [];
  const win: WindowFetch = async (s, e, limit) => {
    asked.push([s, e]);
    const hit = all.filter((m) => m.start < e && m.end >= s);
    return { total: hit.length, offset: 0, items: hit.slice(0, limit) };
  };
  const inRef = (s: number, e: number) => all.filter((m) => m.start < e && m.end >= s).map((m) => m.id);
  const c = new WindowCache(60);
  assert.deepEqual((await c.inView('q', 1000, 1200, win)).map((m) => m.id), inRef(1000, 1200));
  assert.deepEqual(asked, [[800, 1400]], 'three views wide');
  for (const [s, e] of [[900, 1100], [800, 1400], [1003, 1007]]) // pans and zooms inside
    assert.deepEqual((await c.inView('q', s, e, win)).map((m) => m.id), inRef(s, e));
  assert.equal(c.fetches, 1);
  assert.deepEqual((await c.inView('q', 1300, 1500, win)).map((m) => m.id), inRef(1300, 1500), 'outside: asks again');
  assert.equal(c.fetches, 2);
  await c.inView('other', 1300, 1500, win);
  assert.equal(c.fetches, 3, 'another query asks again');
  // dense: the wide window holds more than the limit; its first 60 by start (to t = 590) cover the view: kept to there
  asked.length = 0;
  assert.deepEqual((await c.inView('q', 0, 500, win)).map((m) => m.id), inRef(0, 500));
  assert.deepEqual(asked, [[-500, 1000]]);
  assert.deepEqual((await c.inView('q', 100, 590, win)).map((m) => m.id), inRef(100, 590));
  assert.equal(asked.length, 1, 'reused up to the last match\'s start');
  await c.inView('q', 100, 600, win);
  assert.deepEqual(asked.slice(1), [[-400, 1100], [100, 600]], 'past it: asked again (the wide window, then the view alone)');
  // denser than the limit in view: the first `limit` (the wide window, then the view alone) ...
  asked.length = 0;
  const cut = await c.inView('q', 0, 5000, win);
  assert.deepEqual(cut.map((m) => m.id), inRef(0, 5000).slice(0, 60));
  assert.deepEqual(asked, [[-5000, 10000], [0, 5000]]);
  // ... and while it stays that dense, the view alone at once: one request per change, as without the cache
  await c.inView('q', 100, 5100, win);
  assert.deepEqual(asked.slice(2), [[100, 5100]]);
  // sparse again: the view alone is complete and kept
  assert.deepEqual((await c.inView('q', 1000, 1100, win)).map((m) => m.id), inRef(1000, 1100));
  await c.inView('q', 1010, 1090, win);
  assert.equal(asked.length, 4);
  c.clear();
  await c.inView('q', 1000, 1100, win);
  assert.deepEqual(asked[4], [900, 1200], 'cleared: a wide window again');
});
