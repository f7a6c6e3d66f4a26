/* Stable colours: one hue per name, readable in light and dark themes. */
const cache = new Map<string, string>();

export function colorFor(name: string, kind: string): string {
  const key = `${kind}|${name}`;
  let c = cache.get(key);
  if (c) return c;
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  const k = kind.toLowerCase();
  const base = k.includes('memcpy') ? 30 : k.includes('memset') ? 55 : k.includes('nvtx') ? 270 : k.includes('nccl') ? 0 : 200;
  const hue = (base + ((h >>> 0) % 60) - 30 + 360) % 360;
  c = `hsl(${hue} 55% 52%)`;
  cache.set(key, c);
  return c;
}
