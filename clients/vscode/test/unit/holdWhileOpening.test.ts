import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdWhileOpening } from '../../src/client/holdWhileOpening';

/** A page's message channel: send() delivers to the current listeners. */
function page() {
  const listeners = new Set<(m: unknown) => void>();
  return {
    subscribe: (fn: (m: unknown) => void) => { listeners.add(fn); return { dispose: () => { listeners.delete(fn); } }; },
    send: (m: unknown) => { for (const fn of [...listeners]) fn(m); },
    get listening() { return listeners.size; },
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

test('messages sent while the profile opens reach the bridge in order, before later ones', async () => {
  const p = page(), open = deferred<string | undefined>();
  const got: unknown[] = [];
  let connectedTo: string | undefined;
  holdWhileOpening(p.subscribe, open.promise, (profile, held) => {
    connectedTo = profile;
    got.push(...held);
    p.subscribe((m) => got.push(m)); /* the bridge's own subscription */
  }, () => assert.fail('opening did not fail'));
  p.send({ type: 'ready' });
  p.send({ type: 'log', n: 2 });
  assert.deepEqual(got, [], 'nothing is handled before the profile is open');
  open.resolve('profile-1');
  await open.promise; await Promise.resolve();
  p.send({ type: 'rpc', n: 3 });
  assert.equal(connectedTo, 'profile-1');
  assert.deepEqual(got, [{ type: 'ready' }, { type: 'log', n: 2 }, { type: 'rpc', n: 3 }], 'each message once, in order');
  assert.equal(p.listening, 1, 'the holding listener is gone');
});

test('a failed open shows the failure and connects nothing; a page closed first connects nothing', async () => {
  const p = page(), open = deferred<string | undefined>();
  let failed = 0;
  holdWhileOpening(p.subscribe, open.promise, () => assert.fail('connected after a failed open'), () => { failed++; });
  p.send({ type: 'ready' });
  open.resolve(undefined);
  await open.promise; await Promise.resolve();
  assert.equal(failed, 1);
  assert.equal(p.listening, 0);

  const q = page(), open2 = deferred<string | undefined>();
  const hold = holdWhileOpening(q.subscribe, open2.promise, () => assert.fail('connected a closed page'), () => assert.fail('failure shown on a closed page'));
  q.send({ type: 'ready' });
  hold.dispose();
  assert.equal(q.listening, 0);
  open2.resolve('profile-2');
  await open2.promise; await Promise.resolve();
});
