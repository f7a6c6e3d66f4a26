import { test } from 'node:test';
import assert from 'node:assert/strict';
import { absTime, clockOrigin, parseExact, relTime, stringifyExact } from '../../src/client/exactJson';

test('integer literals beyond ±2^53 parse as BigInt, digit for digit', () => {
  const text = '{"start":1726751178667767434,"end":-1726751178667767435,"small":9007199254740991,"edge":9007199254740993,"d":1.7267511786677674e18,"f":0.12345678901234567,"n":[1,2,1726751178667767434]}';
  const v = parseExact(text) as Record<string, unknown>;
  assert.equal(v.start, 1726751178667767434n);
  assert.equal(v.end, -1726751178667767435n);
  assert.equal(v.small, 9007199254740991);
  assert.equal(v.edge, 9007199254740993n);
  assert.equal(typeof v.d, 'number', 'a double stays a double');
  assert.equal(v.f, 0.12345678901234567, 'fraction digits are not an integer');
  assert.deepEqual(v.n, [1, 2, 1726751178667767434n]);
  assert.notEqual(BigInt(JSON.parse(text).start), 1726751178667767434n, 'what JSON.parse would have given');
});

test('digits inside strings, escaped quotes and NUL-led strings are left alone', () => {
  const cases = ['{"name":"kernel_1726751178667767434","q":"a\\"1726751178667767434\\"b","k":1726751178667767434}',
    '{"nul":"\\u00001726751178667767434","nul2":"\\u0000\\u0000x","\\u0000key1234567890123456":1,"t":12345678901234567890}'];
  for (const text of cases) {
    const v = parseExact(text) as Record<string, unknown>;
    const plain = JSON.parse(text) as Record<string, unknown>;
    for (const [k, x] of Object.entries(plain)) {
      if (typeof x === 'string') assert.equal(v[k], x, k);
    }
    assert.equal(stringifyExact(v), text.replace(/\\u0000/g, '\\u0000'), 'round trip');
  }
});

test('stringifyExact writes BigInt as integer literals, and round trips', () => {
  const v = { a: 1726751178667767434n, b: [-5n, 3, 'x'], c: '\u0000123', d: { e: 2n ** 63n - 1n } };
  const text = stringifyExact(v);
  assert.equal(text, '{"a":1726751178667767434,"b":[-5,3,"x"],"c":"\\u0000123","d":{"e":9223372036854775807}}');
  assert.deepEqual(parseExact(text), { a: 1726751178667767434n, b: [-5, 3, 'x'], c: '\u0000123', d: { e: 9223372036854775807n } });
  assert.equal(stringifyExact({ a: 1 }), '{"a":1}');
});

test('the relative clock: origin 0 on small clocks, aligned and exact on epoch clocks', () => {
  assert.equal(clockOrigin(1_304_349_703, 1_540_180_135), 0n);
  assert.equal(clockOrigin(-5_000_000, 9_000_000), 0n);
  const start = 1726751178667767434n;
  const o = clockOrigin(start, start + 10_000_000_000n);
  assert.equal(o % (1n << 40n), 0n);
  assert.ok(o <= start && start - o < 1n << 40n);
  for (const t of [start, start + 1n, start + 255n, start + 9_999_999_999n]) {
    const r = relTime(t, o);
    assert.ok(Number.isSafeInteger(r));
    assert.equal(absTime(r, o), t, 'round trip to the ns');
  }
  assert.equal(relTime(start + 1n, o) - relTime(start, o), 1, 'one ns apart stays one ns apart');
  assert.equal(relTime(1234, 0n), 1234);
  assert.equal(absTime(1234.4, 0n), 1234);
});

