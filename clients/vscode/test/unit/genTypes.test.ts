import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLIENT_ROOT, REPO_ROOT } from '../helpers';

test('src/protocol/generated matches protocol/schemas (regenerate and diff)', { skip: !fs.existsSync(path.join(REPO_ROOT, 'protocol', 'schemas')) && 'no protocol/schemas' }, () => {
  const out = execFileSync(process.execPath, ['scripts/gen-types.mjs', '--check'], { cwd: CLIENT_ROOT, encoding: 'utf8' });
  assert.match(out, /generated types match \d+ schemas/);
});
