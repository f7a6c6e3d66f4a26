/* The diff view's model: the shared clock (steady-state starts when both runs
 * have them, else session starts; exact beyond 2^53), evidence windows on it,
 * and the headline (incomparable runs say so first). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alignment, evidenceOf, headline, viewOver } from '../../src/client/diffModel';
import type { DiffResult } from '../../src/protocol/viewMessages';

const E = 1_780_000_000_000_000_123n; /* an epoch clock: beyond 2^53 */
const diff = (steady: boolean, comparable = true) => ({
  base: { steadyWindow: steady ? { start: E + 1000n, end: E + 9000n } : null },
  compare: { steadyWindow: steady ? { start: E + 500_000n, end: E + 600_000n } : null },
  comparability: { score: comparable ? 0.9 : 0.2, comparable, reasons: comparable ? [] : [{ code: 'gpu_model', severity: 'error', message: 'A100 vs H100' }] },
  verdict: { overall: comparable ? 'slower' : 'incomparable', confidence: 0.97, text: 'SLOWER: step +12%' },
}) as unknown as DiffResult;

test('both runs on their steady-state starts, else on their session starts', () => {
  assert.deepEqual(alignment(diff(true), E, E + 7n), { base: E + 1000n, compare: E + 500_000n, how: 'steady-state start (warm-up excluded)' });
  const s = alignment(diff(false), E, E + 7n);
  assert.deepEqual([s.base, s.compare], [E, E + 7n]);
  assert.match(s.how, /session start/);
});

test('evidence windows on the shared clock, exact on epoch clocks; a side without one has none', () => {
  const a = alignment(diff(true), E, E);
  const d = { evidence: { base: { start: E + 1001n, end: E + 1501n }, compare: null } } as unknown as DiffResult['deltas'][number];
  assert.deepEqual(evidenceOf(d, a), { base: { start: 1, end: 501 } });
  const both = { evidence: { base: { start: E + 2000n, end: E + 2100n }, compare: { start: E + 500_010n, end: E + 500_400n } } } as unknown as DiffResult['deltas'][number];
  const ev = evidenceOf(both, a);
  assert.deepEqual(ev, { base: { start: 1000, end: 1100 }, compare: { start: 10, end: 400 } });
  assert.deepEqual(viewOver(Object.values(ev)), { start: 10 - 1000, end: 1100 + 1000 }, 'both windows, padded (at least 1 µs)');
});

test('the headline: the verdict, or first that the runs are not comparable', () => {
  assert.deepEqual(headline(diff(true)), { text: 'SLOWER: step +12%', tone: 'bad' });
  const h = headline(diff(true, false));
  assert.equal(h.tone, 'warn');
  assert.match(h.text, /^Not comparable \(score 0\.20\): A100 vs H100/);
});
