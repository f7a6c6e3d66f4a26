/* Exact integers in JSON, and the clients' relative clock. Epoch-clocked
 * exports (`--ts-normalize`, multi-node captures) keep times around 1.7e18,
 * beyond 2^53, where JSON.parse rounds to a multiple of 256 ns. The server
 * prints every integer exactly; parseExact reads integer literals beyond
 * ±2^53 as BigInt (all others as JSON.parse does), stringifyExact writes
 * BigInt back as integer literals. A timeline draws in numbers, so each
 * client keeps times as offsets from an origin (clockOrigin: 0 when the
 * profile's clock is small, else its start rounded down to a multiple of
 * 2^40 ns so that every power-of-two grid of the server stays aligned):
 * offsets are exact while under 2^53 ns (104 days). The Jupyter widget's
 * twin is clients/jupyter/js/src/exact_json.ts (a unit test keeps them
 * identical). */

/** An integer as the codec gives it: a number when exact, else a BigInt. */
export type Int = number | bigint;

/** 2^53 has 16 digits: an integer literal beyond ±2^53 has a run of at least 16. */
const LONG_DIGITS = /\d{16}/;
/** JSON tokens that can hold digits: strings (skipped whole) and numbers. */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const STRING = /"(?:[^"\\]|\\.)*"/g;
/* A big integer travels through JSON.parse/stringify as a string beginning
 * with U+0000; a real string beginning with U+0000 gets a second one. */
const MARK = '\u0000';
const MARK_JSON = '"\\u0000';

/** JSON.parse, except that integer literals beyond ±2^53 become BigInt. */
export function parseExact(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  let marked = false;
  const out = text.replace(TOKEN, (tok: string, at: number) => {
    if (tok.charCodeAt(0) === 34) {
      /* object keys are never revived: leave them as they are */
      if (!tok.startsWith(MARK_JSON) || /^\s*:/.test(text.slice(at + tok.length, at + tok.length + 64))) return tok;
      marked = true;
      return MARK_JSON + tok.slice(1);
    }
    if (tok.length < 16 || /[.eE]/.test(tok) || Number.isSafeInteger(Number(tok))) return tok;
    marked = true;
    return `${MARK_JSON}${tok}"`;
  });
  if (!marked) return JSON.parse(text);
  return JSON.parse(out, (_k, v: unknown) => {
    if (typeof v !== 'string' || v.charCodeAt(0) !== 0) return v;
    return v.charCodeAt(1) === 0 ? v.slice(1) : BigInt(v.slice(1));
  });
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
