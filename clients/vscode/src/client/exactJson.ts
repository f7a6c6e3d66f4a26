/* Exact integers in JSON, and the clients' relative clock. Epoch-clocked
 * exports (`--ts-normalize`, multi-node captures) keep times around 1.7e18,
 * beyond 2^53, where JSON.parse rounds to a multiple of 256 ns. The server
 * prints every integer exactly; parseExact reads integer literals beyond
 * ±2^53 as BigInt (all others as JSON.parse does), stringifyExact writes
 * BigInt back as integer literals. A timeline draws in numbers, so each
 * client keeps times as offsets from an origin (clockOrigin: 0 when the
 * profile's clock is small, else its start rounded down to a multiple of
 * 2^40 ns so that every power-of-two grid of the server stays aligned):
 * offsets are exact while under 2^53 ns (104 days). The Jupyter widget
 * imports it too (its build's `nsys-views` alias). */

/** An integer as the codec gives it: a number when exact, else a BigInt. */
export type Int = number | bigint;

/** 2^53 has 16 digits: an integer literal beyond ±2^53 has a run of at least 16. */
const LONG_DIGITS = /\d{16}/;
const STRING = /"(?:[^"\\]|\\.)*"/g;
/* A big integer travels through JSON.parse/stringify as a string beginning
 * with U+0000; a real string beginning with U+0000 gets a second one. */
const MARK = '\u0000';
const MARK_JSON = '"\\u0000';

/** JSON.parse, except that integer literals beyond ±2^53 become BigInt. One pass over the
 *  text (strings skipped whole) marks them, JSON.parse reads the marked text, and a walk turns
 *  the marks into BigInt (a reviver would cost a call per value). */
export function parseExact(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  const parts: string[] = [];
  let last = 0;
  const n = text.length;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    if (c === 34) { /* a string: to its closing quote (one preceded by an even number of backslashes) */
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return JSON.parse(text); /* malformed: JSON.parse says where */
        let k = j - 1;
        while (text.charCodeAt(k) === 92) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j++;
      }
      /* a value beginning with U+0000 gets a second one (object keys are never revived) */
      if (text.startsWith(MARK_JSON, i) && !/^\s*:/.test(text.slice(j + 1, j + 65))) {
        parts.push(text.slice(last, i), MARK_JSON);
        last = i + 1;
      }
      i = j + 1;
    } else if (c === 45 || (c >= 48 && c <= 57)) { /* a number */
      let j = i + 1;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      const d = text.charCodeAt(j);
      if (d === 46 || d === 101 || d === 69) { /* a fraction or an exponent: not an integer */
        while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      } else if (j - i >= 16 && !Number.isSafeInteger(Number(text.slice(i, j)))) {
        parts.push(text.slice(last, i), MARK_JSON, text.slice(i, j), '"');
        last = j;
      }
      i = j;
    } else i++;
  }
  if (!parts.length) return JSON.parse(text);
  parts.push(text.slice(last));
  return revive(JSON.parse(parts.join('')));
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isNumberChar = (c: number) => isDigit(c) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;

/** A marked string's value: the BigInt it stands for, or the string less its added U+0000. */
function unmark(v: string): string | bigint {
  return v.charCodeAt(1) === 0 ? v.slice(1) : BigInt(v.slice(1));
}

/** Replaces the marks of parseExact in place (values only: keys were never marked). */
function revive(v: unknown): unknown {
  if (typeof v === 'string') return v.charCodeAt(0) === 0 ? unmark(v) : v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'string') { if (x.charCodeAt(0) === 0) v[i] = unmark(x); } else if (x !== null && typeof x === 'object') revive(x);
    }
  } else if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k in o) {
      const x = o[k];
      if (typeof x === 'string') { if (x.charCodeAt(0) === 0) o[k] = unmark(x); } else if (x !== null && typeof x === 'object') revive(x);
    }
  }
  return v;
}

/** JSON.stringify, except that BigInt values are written as integer literals. */
export function stringifyExact(value: unknown): string {
  try {
    return JSON.stringify(value); /* no BigInt: the plain (fast) way; a NUL-led string is parseExact's to keep */
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
  }
  let marked = false;
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') { marked = true; return MARK + v.toString(); }
    if (typeof v === 'string' && v.charCodeAt(0) === 0) { marked = true; return MARK + v; }
    return v;
  });
  if (!marked) return text;
  return text.replace(STRING, (tok: string, at: number) => {
    if (!tok.startsWith(MARK_JSON) || text.charCodeAt(at + tok.length) === 58 /* a key */) return tok;
    const rest = tok.slice(MARK_JSON.length, -1);
    return /^-?\d+$/.test(rest) ? rest : `"${tok.slice(MARK_JSON.length)}`;
  });
}

const ALIGN = 1n << 40n;
const SMALL = 1n << 50n;

/** The origin of a profile's relative clock: 0 when its span is within ±2^50 ns,
 *  else its start rounded down to a multiple of 2^40 ns. */
export function clockOrigin(start: Int, end: Int = start): bigint {
  const s = BigInt(start), e = BigInt(end);
  if (s > -SMALL && s < SMALL && e > -SMALL && e < SMALL) return 0n;
  return s - (((s % ALIGN) + ALIGN) % ALIGN);
}

/** A time as an offset from `origin`: exact while the offset is under 2^53. */
export function relTime(t: Int, origin: bigint): number {
  if (typeof t === 'number' && origin === 0n) return t;
  return Number(BigInt(t) - origin);
}

/** An offset back on the profile's clock (rounded to the ns), exact. */
export function absTime(offset: number, origin: bigint): Int {
  const n = Math.round(offset);
  if (origin === 0n) return n;
  const t = origin + BigInt(n);
  return t >= -9007199254740991n && t <= 9007199254740991n ? Number(t) : t;
}

/** Whether a value is an integer as parseExact gives it. */
export function isInt(v: unknown): v is Int {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}
