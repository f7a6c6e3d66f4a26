/* nsys's carriage-return progress bars reach the output channel as their last frame. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lastFrame, ProgressFold } from '../../src/client/progressFold';

test('a rewritten line keeps its last frame; plain lines and CRLF pass unchanged', () => {
  const f = new ProgressFold();
  assert.equal(f.push('Generating report\n[1/8] [==      ] 20%\r[1/8] [=====   ] 60%\r[1/8] [========] 100%\n'),
    'Generating report\n[1/8] [========] 100%\n');
  assert.equal(f.push('windows line\r\n'), 'windows line\n');
  assert.equal(f.flush(), '');
});

test('frames split across chunks: a line is shown once it ends', () => {
  const f = new ProgressFold();
  assert.equal(f.push('[2/8] [=    ] 10%\r[2/8] [=='), '');
  assert.equal(f.push('===] 100%\rdone'), '');
  assert.equal(f.push('\nnext'), 'done\n');
  assert.equal(f.flush(), 'next');
  assert.equal(f.flush(), '');
});

test('lastFrame: one line as a terminal leaves it', () => {
  assert.equal(lastFrame('a\rb\rc'), 'c');
  assert.equal(lastFrame('line\r'), 'line');
  assert.equal(lastFrame(''), '');
});
