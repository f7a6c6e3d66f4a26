/* A request over the server's frame limit, against the REAL server: the
 * server's refusal names the request's id (it scans the skipped body for it),
 * so the pending request fails with a clear error instead of waiting forever,
 * and the connection keeps serving. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { NsysClient, ResponseError } from '../../src/client/nsysClient';
import { collectingLogger } from '../../src/client/logger';
import { serverBinary, NO_SERVER } from '../helpers';

const bin = serverBinary();
const logs: string[] = [];
let client: NsysClient | undefined;
after(async () => { if (client) await client.dispose(); });

test('a request over the frame limit fails with the refusal, then the next is answered', { skip: !bin && NO_SERVER, timeout: 30_000 }, async () => {
  client = new NsysClient({ command: bin!, args: ['serve', '--max-frame-bytes', '4096'], logger: collectingLogger(logs), maxRestarts: 0 });
  await assert.rejects(client.requestUntyped('profile/open', { path: 'x'.repeat(10_000) }),
    (e: unknown) => e instanceof ResponseError && e.code === -32600 && /exceeds the maximum of 4096 bytes/.test(e.message));
  await assert.rejects(client.requestUntyped('profile/open', { path: '/no/such/file.sqlite' }),
    (e: unknown) => e instanceof ResponseError && e.code !== -32600);
});
