import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCursor, tickStep, timeAxis } from '../../src/client/timeAxis';

/** Zoom by 2× around `center` from a 10 s view down to a few ns, as the wheel does. */
function* zoomSteps(origin: number, center: number): Generator<[number, number]> {
  for (let span = 10e9; span >= 4; span /= 2) yield [center - span / 2, center + span / 2].map((v) => origin + v) as [number, number];
}

test('every zoom step has distinct labels, near and far from the start', () => {
  for (const origin of [0, 1_000_000, 1.7e12]) {
    for (const center of [3e3, 142e6 + 123.4e3, 3.7e9, 9.99e9]) {
      for (const [s, e] of zoomSteps(origin, center)) {
        const ax = timeAxis(s, e, origin, 8);
        const labels = ax.ticks.map((t) => t.label);
        assert.ok(labels.length >= 2, `${labels.length} ticks for [${s}, ${e}]`);
        assert.equal(new Set(labels).size, labels.length, `repeated labels ${labels.join(' | ')} (base ${ax.base}) for [${s}, ${e}]`);
        for (const t of ax.ticks) assert.ok(t.t >= s - 1e-6 && t.t <= e + 1e-6);
        /* a base, when shown, is the first tick's time, and it alone distinguishes the view */
        if (ax.base) assert.equal(labels[0], '+0');
      }
    }
  }
});

test('labels carry exactly the precision of the step', () => {
  assert.deepEqual(timeAxis(142e6, 143e6, 0, 5).ticks.map((t) => t.label), ['142.0 ms', '142.2 ms', '142.4 ms', '142.6 ms', '142.8 ms', '143.0 ms']);
  assert.deepEqual(timeAxis(0, 10e9, 0, 5).ticks.map((t) => t.label), ['0 s', '2 s', '4 s', '6 s', '8 s', '10 s']);
  assert.deepEqual(timeAxis(0, 1000, 0, 4).ticks.map((t) => t.label), ['0.0 µs', '0.5 µs', '1.0 µs']);
  const far = timeAxis(142_000_100, 142_000_900, 0, 8);
  assert.equal(far.base, '142.0001 ms');
  assert.deepEqual(far.ticks.map((t) => t.label), ['+0', '+100 ns', '+200 ns', '+300 ns', '+400 ns', '+500 ns', '+600 ns', '+700 ns', '+800 ns']);
  assert.equal(far.span, 'span 800 ns');
  assert.equal(timeAxis(-5e6, 5e6, 0, 4).ticks.map((t) => t.label).join(' '), '-5 ms 0 ms 5 ms');
});

test('tick steps are 1, 2 or 5 × 10^k ns and never below 1 ns', () => {
  assert.equal(tickStep(1000, 10), 100);
  assert.equal(tickStep(1001, 10), 200);
  assert.equal(tickStep(3, 10), 1);
  assert.equal(tickStep(7e9, 8), 1e9);
  assert.equal(tickStep(0, 8), 1);
});

test('the cursor reads one digit finer than the ticks', () => {
  assert.equal(formatCursor(142_000_150, 0, 100), '142.00015 ms');
  assert.equal(formatCursor(2_500_000_000, 0, 1e9), '2.5 s');
  assert.equal(formatCursor(5, 0, 1), '5 ns');
});

