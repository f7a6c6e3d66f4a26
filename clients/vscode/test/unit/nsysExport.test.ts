import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXPORT_PROBE_BYTES, looksLikeNsysExport } from '../../src/client/nsysExport';
import { smallProfile, REPO_ROOT } from '../helpers';

const head = (file: string) => { const b = fs.readFileSync(file); return new Uint8Array(b.buffer, b.byteOffset, Math.min(b.length, EXPORT_PROBE_BYTES)); };

test('an nsys export is recognised from its first bytes; other SQLite and other files are not', (t) => {
  const profile = smallProfile();
  if (!profile) return t.skip('no generated profile (python3 tools/gen_profile.py)');
  assert.equal(looksLikeNsysExport(head(profile)), true);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-detect-'));
  try {
    const plain = path.join(dir, 'plain.sqlite');
    execFileSync('python3', ['-c', 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE StringIds(id, value)"); c.commit()', plain]);
    assert.equal(looksLikeNsysExport(head(plain)), false, 'a SQLite file with a StringIds table only');
    const text = path.join(dir, 'notes.sqlite');
    fs.writeFileSync(text, 'StringIds TARGET_INFO_GPU '.repeat(100));
    assert.equal(looksLikeNsysExport(head(text)), false, 'not SQLite');
    assert.equal(looksLikeNsysExport(new Uint8Array()), false);
  } finally { fs.rmSync(dir, { recursive: true, force: true }); }
});

test('the real exports in ../shared/profiles are recognised from their first 256 KiB', (t) => {
  const dir = path.join(REPO_ROOT, '..', 'shared', 'profiles');
  if (!fs.existsSync(dir)) return t.skip(`${dir} is absent`);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.sqlite'));
  assert.ok(files.length > 0);
  const missed = files.filter((f) => !looksLikeNsysExport(head(path.join(dir, f))));
  assert.deepEqual(missed, []);
});
