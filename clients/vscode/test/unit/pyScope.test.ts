import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enclosingFunction } from '../../src/client/pyScope';

const src = `import torch

class Model:
    def forward(self, x):
        y = self.a(x)

        return y

async def step(batch):
    loss = model(batch)
    loss.backward()
x = 1
`.split('\n');
const at = (i: number) => src[i] ?? '';

test('enclosing def by indentation, across blank lines; none at module level', () => {
  assert.equal(enclosingFunction(at, 4), 'forward');
  assert.equal(enclosingFunction(at, 6), 'forward');
  assert.equal(enclosingFunction(at, 3), 'forward', 'on the def line itself');
  assert.equal(enclosingFunction(at, 10), 'step');
  assert.equal(enclosingFunction(at, 11), undefined);
  assert.equal(enclosingFunction(at, 2), undefined, 'class line');
  assert.equal(enclosingFunction(at, 0), undefined);
});
