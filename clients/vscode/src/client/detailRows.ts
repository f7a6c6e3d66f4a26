/* The Details panel's rows for a GPU op (kernel/details): what an engineer
 * reads first, named and in units, the way Nsight Systems' event view shows
 * them (times as offsets from the profile's start, grid and block as x×y×z,
 * copy kinds and memory kinds by name). Every column the export has stays
 * available under "All columns". */
import { formatNs } from './format';
import { isInt, type Int } from './exactJson';

export type DetailRow = [label: string, value: string];

/** nsys's ENUM_CUDA_MEMCPY_OPER (the same in every export version seen). */
const COPY_KINDS = ['Unknown', 'Host-to-Device', 'Device-to-Host', 'Host-to-Array', 'Array-to-Host', 'Array-to-Array', 'Array-to-Device',
  'Device-to-Array', 'Device-to-Device', 'Host-to-Host', 'Peer-to-Peer', 'Unified Host-to-Device', 'Unified Device-to-Host', 'Unified Device-to-Device'];
/** nsys's ENUM_CUDA_MEM_KIND (not CUPTI's numbering). */
const MEM_KINDS = ['Pageable', 'Pinned', 'Device', 'Array', 'Managed', 'Device static', 'Managed static', 'Unknown'];
const LAUNCH_TYPES = ['Unknown', 'Regular', 'Cooperative (single device)', 'Cooperative (multi-device)'];
const MIGRATION_CAUSES = ['Unknown', 'User prefetch', 'Page fault (coherence)', 'Speculative prefetch', 'Eviction', 'Access counters'];

type Rec = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
/** t − origin, exactly (times are BigInt beyond 2^53: client/exactJson). */
const since = (t: unknown, origin: Int): number | undefined => (isInt(t) ? Number(BigInt(t) - BigInt(origin)) : undefined);
const named = (table: string[], v: unknown) => { const n = num(v); return n === undefined ? undefined : table[n] ?? `kind ${n}`; };

export function formatBytes(b: number): string {
  if (b >= 1024 ** 3) return `${(b / 1024 ** 3).toFixed(2)} GiB`;
  if (b >= 1024 ** 2) return `${(b / 1024 ** 2).toFixed(2)} MiB`;
  if (b >= 1024) return `${(b / 1024).toFixed(1)} KiB`;
  return `${b} B`;
}

/** "+12.345678 ms" from the profile's start, to the nanosecond. */
function offset(t: unknown, origin: Int): string | undefined {
  const d = since(t, origin);
  if (d === undefined) return undefined;
  const a = Math.abs(d);
  const [u, s] = a >= 1e9 ? [1e9, 's'] : a >= 1e6 ? [1e6, 'ms'] : a >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
  return `${d < 0 ? '−' : '+'}${(a / u).toFixed(Math.round(Math.log10(u)))} ${s}`;
}

function dims(c: Rec, p: string): string | undefined {
  const x = num(c[`${p}X`]), y = num(c[`${p}Y`]), z = num(c[`${p}Z`]);
  return x === undefined ? undefined : `${x} × ${y ?? 1} × ${z ?? 1}`;
}

/** The curated rows; rows whose value the export lacks are left out. */
export function detailRows(d: Rec, origin: Int): DetailRow[] {
  const c = (d.columns && typeof d.columns === 'object' ? d.columns : {}) as Rec;
  const api = (d.api && typeof d.api === 'object' ? d.api : undefined) as Rec | undefined;
  const rows: Array<[string, string | undefined]> = [];
  const dur = isInt(d.start) && isInt(d.end) ? Number(BigInt(d.end) - BigInt(d.start)) : undefined;
  rows.push(['Begins', offset(d.start, origin)], ['Ends', offset(d.end, origin)]);
  rows.push(['Duration', dur !== undefined ? formatNs(dur) : undefined]);
  /* the profile's own clock, every digit (what the export's start/end columns hold) */
  rows.push(['Start (ns)', isInt(d.start) ? String(d.start) : undefined], ['End (ns)', isInt(d.end) ? String(d.end) : undefined]);
  rows.push(['GPU', d.device === undefined ? undefined : `${String(d.device)}${num(c.contextId) !== undefined ? ` · context ${String(c.contextId)}` : ''}`]);
  rows.push(['Stream', d.stream === undefined ? undefined : `${String(d.stream)}${d.streamClass ? ` (${String(d.streamClass)})` : ''}`]);
  if (d.kind === 'kernel' || num(c.gridX) !== undefined) {
    rows.push(['Grid', dims(c, 'grid')], ['Block', dims(c, 'block')]);
    const cx = num(c.clusterX);
    if (cx) rows.push(['Cluster', dims(c, 'cluster')]);
    rows.push(['Registers per thread', num(c.registersPerThread)?.toString()]);
    const st = num(c.staticSharedMemory), dy = num(c.dynamicSharedMemory), ex = num(c.sharedMemoryExecuted);
    if (st !== undefined || dy !== undefined) {
      rows.push(['Shared memory', `${formatBytes((st ?? 0) + (dy ?? 0))} (static ${formatBytes(st ?? 0)}, dynamic ${formatBytes(dy ?? 0)})${ex ? ` · ${formatBytes(ex)} configured` : ''}`]);
    }
    const lm = num(c.localMemoryPerThread);
    if (lm) rows.push(['Local memory per thread', formatBytes(lm)]);
    rows.push(['Launch type', named(LAUNCH_TYPES, c.launchType)]);
  }
  const bytes = num(c.bytes);
  if (bytes !== undefined) {
    rows.push(['Size', formatBytes(bytes)]);
    if (dur !== undefined && dur > 0) rows.push(['Throughput', `${(bytes / dur).toFixed(2)} GB/s`]);
    rows.push(['Copy kind', named(COPY_KINDS, c.copyKind)]);
    const src = named(MEM_KINDS, c.srcKind), dst = named(MEM_KINDS, c.dstKind);
    if (src || dst) rows.push(['Memory', `${src ?? '?'} → ${dst ?? '?'}`]);
    if (num(c.memKind) !== undefined) rows.push(['Memory', named(MEM_KINDS, c.memKind)]);
    if (num(c.migrationCause) !== undefined) rows.push(['Migration cause', named(MIGRATION_CAUSES, c.migrationCause)]);
  }
  if (num(c.graphId) !== undefined || num(c.graphNodeId) !== undefined) rows.push(['CUDA graph', `graph ${String(c.graphId ?? '?')}, node ${String(c.graphNodeId ?? '?')}`]);
  if (api) {
    rows.push(['Launched by', `${String(api.name ?? '?')} on ${api.threadName ? `${String(api.threadName)} ` : ''}(pid ${String(api.pid ?? '?')}, tid ${String(api.tid ?? '?')})`]);
    const ad = isInt(api.start) ? since(api.end, api.start) : undefined;
    if (ad !== undefined) rows.push(['API call', `${offset(api.start, origin)} for ${formatNs(ad)}`]);
    const q = num(api.queueDelayNs);
    if (q !== undefined) rows.push(['Queue delay', q >= 0 ? formatNs(q) : `started ${formatNs(-q)} before the call returned`]);
  }
  rows.push(['Correlation id', num(c.correlationId ?? api?.correlationId)?.toString()]);
  if (Array.isArray(d.nvtxPath) && d.nvtxPath.length) rows.push(['NVTX', d.nvtxPath.map((n) => String((n as Rec).name ?? '?')).join(' › ')]);
  if (typeof d.demangledName === 'string' && d.demangledName !== d.name) rows.push(['Full name', d.demangledName]);
  return rows.filter((r): r is DetailRow => r[1] !== undefined && r[1] !== '');
}

/** Every column of the export's row, nulls left out (the "All columns" section). */
export function columnRows(d: Rec): DetailRow[] {
  const c = (d.columns && typeof d.columns === 'object' ? d.columns : {}) as Rec;
  return Object.entries(c).filter(([, v]) => v !== null && v !== undefined && v !== '' && v !== '[]').map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
}
