import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FirstFrameGate } from '../../src/client/firstFrameGate';

const settledWithin = async (p: Promise<void>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

test('a wait ends when the profile draws, not before', async () => {
  const g = new FirstFrameGate();
  const w = g.wait('a', 10_000);
  assert.equal(await settledWithin(w, 30), false, 'still waiting before the first frame');
  g.drawn('b');
  assert.equal(await settledWithin(w, 30), false, 'another profile drawing does not end it');
  g.drawn('a');
  assert.equal(await settledWithin(w, 30), true);
});

test('after the first frame a wait ends at once; without one, after the timeout', async () => {
  const g = new FirstFrameGate();
  g.drawn('a');
  assert.equal(await settledWithin(g.wait('a', 10_000), 5), true);
  const t0 = Date.now();
  await g.wait('never', 60);
  assert.ok(Date.now() - t0 >= 55, 'waited for the timeout');
});

test('closing a profile ends its waits, and a reopen waits for its own first frame', async () => {
  const g = new FirstFrameGate();
  g.drawn('a');
  g.forget('a');
  const w = g.wait('a', 10_000);
  assert.equal(await settledWithin(w, 30), false);
  g.forget('a');
  assert.equal(await settledWithin(w, 30), true);
});
