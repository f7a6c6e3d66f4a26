import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundledServerPath } from '../../src/client/bundledServer';
import { resolveServerPath } from '../../src/client/serverPath';

test('bundled server: server/nsys-ai in the extension, made executable; used after the setting and PATH', () => {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-ext-'));
  try {
    assert.equal(bundledServerPath(undefined), undefined);
    assert.equal(bundledServerPath(ext), undefined);                 // the generic VSIX: none
    fs.mkdirSync(path.join(ext, 'server'));
    const bin = path.join(ext, 'server', 'nsys-ai');
    fs.copyFileSync(process.execPath, bin);
    fs.chmodSync(bin, 0o644);                                         // mode bits lost on install
    assert.equal(bundledServerPath(ext), bin);
    assert.equal(fs.statSync(bin).mode & 0o111, 0o111);
    const node = process.execPath;
    assert.deepEqual(resolveServerPath(undefined, '/nonexistent', bin), { ok: true, path: bin });
    assert.deepEqual(resolveServerPath(node, '/nonexistent', bin), { ok: true, path: node });
    const pathDir = path.join(ext, 'path');
    fs.mkdirSync(pathDir);
    fs.symlinkSync(node, path.join(pathDir, 'nsys-ai'));
    assert.deepEqual(resolveServerPath(undefined, pathDir, bin), { ok: true, path: path.join(pathDir, 'nsys-ai') });
    assert.equal(resolveServerPath(undefined, '/nonexistent', undefined).ok, false);
  } finally {
    fs.rmSync(ext, { recursive: true, force: true });
  }
});
