import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBridge } from '../../src/client/bridgeCore';
import { fromEnvelope, toEnvelope, type HostToWebview } from '../../src/protocol/messages';
import type { NsysClient } from '../../src/client/nsysClient';
import type { ProfileInfo } from '../../src/protocol/types';

/* A page's `batch` (its messages of one task) is taken apart at the host: each
 * well-formed request answered on its own, malformed parts dropped with no throw. */
function bridgeWithFakeServer() {
  const asked: string[] = [];
  const posted: HostToWebview[] = [];
  const warned: string[] = [];
  const client = {
    request: async () => { throw new Error('no tracks here'); },
    requestUntyped: async (method: string) => { asked.push(method); return { ok: method }; },
  } as unknown as NsysClient;
  const log = () => {};
  const bridge = createBridge({
    client: async () => client,
    profile: () => ({ profileId: 'p1', title: 't', info: {} as ProfileInfo }),
    post: (env) => posted.push(fromEnvelope(env) as HostToWebview),
    logger: { info: log, debug: log, error: log, warn: (m: string) => warned.push(m) } as never,
  });
  return { bridge, asked, posted, warned };
}

test('a batch answers each of its requests, each in its own message', async () => {
  const { bridge, asked, posted } = bridgeWithFakeServer();
  await bridge.handle(toEnvelope({ type: 'batch', messages: [
    { type: 'rpc', id: 1, method: 'timeline/range', params: {} },
    { type: 'rpc', id: 2, method: 'kernel/details', params: {} },
  ] }));
  assert.deepEqual(asked.sort(), ['kernel/details', 'timeline/range']);
  const ids = posted.filter((m) => m.type === 'rpcResult').map((m) => (m as { id: number }).id).sort();
  assert.deepEqual(ids, [1, 2]);
});

test('a malformed batch (no array, junk parts, a nested batch) throws nothing and asks only the well-formed', async () => {
  const { bridge, asked } = bridgeWithFakeServer();
  await bridge.handle({ json: '{"type":"batch","messages":7}' });
  await bridge.handle({ json: '{"type":"batch"}' });
  await bridge.handle({ json: JSON.stringify({ type: 'batch', messages: [null, 5, 'x', { type: 'batch', messages: [{ type: 'rpc', id: 9, method: 'timeline/range', params: {} }] },
    { type: 'rpc', id: 3, method: 'timeline/range', params: {} }] }) });
  assert.deepEqual(asked, ['timeline/range']);
});
