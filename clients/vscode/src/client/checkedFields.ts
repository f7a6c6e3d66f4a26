/* Reading a reply's fields that its schema requires without typing them
 * (profile/diff's rows, profile/openSet's ranks and files): checked, so a
 * reply of another shape fails with the field's name instead of drawing
 * nonsense. */
import { isInt, type Int } from './exactJson';

function field(o: unknown, key: string, what: string, ok: (v: unknown) => boolean, where: string): unknown {
  const v = typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[key] : undefined;
  if (!ok(v)) throw new Error(`${where}: ${key} is not ${what}`);
  return v;
}

export const numField = (o: unknown, key: string, where: string) => field(o, key, 'a number', (v) => typeof v === 'number', where) as number;
export const intField = (o: unknown, key: string, where: string) => field(o, key, 'an integer', isInt, where) as Int;
export const strField = (o: unknown, key: string, where: string) => field(o, key, 'a string', (v) => typeof v === 'string', where) as string;
