import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeOpenError, renderOpenErrorHtml } from '../../src/client/openError';
import { resolveServerPath } from '../../src/client/serverPath';
import { ErrorCode } from '../../src/protocol/methods';

/** What vscode-jsonrpc's ResponseError carries: the server's code and message. */
const rpcError = (code: number, message: string) => Object.assign(new Error(message), { code });

test('each way opening fails is named, with actions that fit it', () => {
  const missing = resolveServerPath('/nonexistent/nsys-ai');
  assert.equal(missing.ok, false);
  const cases: Array<[unknown, string, string[]]> = [
    [new Error(missing.ok ? '' : missing.message), 'serverMissing', ['setServerPath', 'retry', 'showLog']],
    [rpcError(ErrorCode.NotNsysExport, 'not an Nsight Systems export: no CUPTI or NVTX tables'), 'notProfile', ['retry', 'showLog', 'openDefault']],
    [rpcError(ErrorCode.NotSqlite, 'not a SQLite database'), 'notProfile', ['retry', 'showLog', 'openDefault']],
    [rpcError(ErrorCode.Corrupt, 'profile database is corrupt: database disk image is malformed'), 'corrupt', ['retry', 'showLog', 'openDefault']],
    [rpcError(ErrorCode.FileNotFound, 'profile file not found: /x.sqlite'), 'notFound', ['retry', 'showLog', 'openDefault']],
    [rpcError(ErrorCode.ExportFailed, 'nsys export failed: exit 1'), 'exportFailed', ['retry', 'showLog', 'openDefault']],
    [rpcError(ErrorCode.Cancelled, 'request cancelled'), 'cancelled', ['retry', 'showLog']],
    [new Error('Opening .nsys-rep needs NVIDIA Nsight Systems (`nsys`) on PATH; or export it yourself'), 'needsNsys', ['retry', 'showLog', 'openDefault']],
    ['something else', 'other', ['retry', 'showLog', 'openDefault']],
  ];
  for (const [err, kind, actions] of cases) {
    const v = describeOpenError(err);
    assert.equal(v.kind, kind, String((err as Error).message ?? err));
    assert.deepEqual(v.actions.map((a) => a.id), actions);
    assert.ok(v.title && v.hint && v.message);
  }
});

test('the error page shows the server\'s message escaped, and runs only its nonce script', () => {
  const v = describeOpenError(rpcError(ErrorCode.NotNsysExport, 'not an Nsight Systems export: <img src=x onerror=alert(1)>'));
  const html = renderOpenErrorHtml(v, '/data/run "1".sqlite', 'vscode-resource:', 'N0NCE');
  assert.ok(html.includes('not an Nsight Systems export: &#60;img src=x onerror=alert(1)&#62;'));
  assert.ok(!html.includes('<img'));
  assert.ok(html.includes('/data/run &#34;1&#34;.sqlite'));
  assert.match(html, /script-src 'nonce-N0NCE'/);
  assert.equal((html.match(/<script /g) ?? []).length, 1);
  assert.ok(html.includes('<script nonce="N0NCE">'));
  assert.deepEqual([...html.matchAll(/data-action="(\w+)"/g)].map((m) => m[1]), ['retry', 'showLog', 'openDefault']);
  assert.match(html, /<h1 id="open-error" data-kind="notProfile">This file is not an Nsight Systems export<\/h1>/);
});
