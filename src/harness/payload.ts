import { PayloadError } from './types.js';

/** Small readers for JSON payloads: each failure names the field, so the blocking reason says what was wrong. */
export type Obj = Record<string, unknown>;

export function parseObject(text: string, what: string): Obj {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    const snippet = text.trim() === '' ? 'stdin was empty' : `not JSON (${(err as Error).message})`;
    throw new PayloadError(`the ${what} hook payload is ${snippet}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new PayloadError(`the ${what} hook payload is not a JSON object`);
  return v as Obj;
}

export function str(o: Obj, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string')
    throw new PayloadError(
      `${where}.${key} is ${v === undefined ? 'missing' : `a ${typeof v}, not a string`}`,
    );
  return v;
}

export function optStr(o: Obj, key: string): string | null {
  const v = o[key];
  return typeof v === 'string' ? v : null;
}

/** The first of several spellings that is a string (for fields whose name is unverified). */
export function anyStr(o: Obj, keys: readonly string[], where: string): string {
  for (const k of keys) if (typeof o[k] === 'string') return o[k] as string;
  throw new PayloadError(`${where} has none of ${keys.join(', ')} as a string`);
}

export function obj(o: Obj, key: string, where: string): Obj {
  const v = o[key];
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new PayloadError(`${where}.${key} is ${v === undefined ? 'missing' : 'not an object'}`);
  return v as Obj;
}

export function bool(o: Obj, key: string): boolean {
  const v = o[key];
  return v === true || v === 'true';
}

export function json(value: unknown): string {
  return JSON.stringify(value) + '\n';
}
