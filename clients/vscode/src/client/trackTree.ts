/* The timeline's rows as Nsight Systems arranges them: per GPU a utilisation
 * row (its streams merged) over its streams and its NVTX projection; per
 * process its threads, each with its NVTX ranges stacked in one expandable
 * row (depth 0; expanded, one row per depth) and its CUDA API row. Groups
 * collapse (a collapsed group draws its children merged in its own row),
 * rows and groups hide, and pinned rows come first. Free of DOM: the
 * Jupyter widget imports it too (its build's `nsys-views` alias). */

/** What the tree needs of a timeline/tracks entry. */
export interface TreeTrack {
  id: string;
  kind: string;
  name?: string;
  device?: number;
  stream?: number;
  pid?: number;
  tid?: number;
  depth?: number;
  threadName?: string;
  streamClass?: string;
}

/** A node: `ids` are the tracks drawn in its own row (several are drawn merged). */
export interface TreeNode {
  key: string;
  label: string;
  /** gpu: GPU ops (clickable); util: a GPU's streams merged; nvtx; api; group: a process or thread */
  kind: 'gpu' | 'util' | 'nvtx' | 'api' | 'group';
  ids: string[];
  children: TreeNode[];
  /** open unless the user closes it (NVTX depth rows start closed) */
  openByDefault: boolean;
  /** the full name (tooltip) */
  title: string;
}

/** One row to draw, in order. */
export interface TreeRow {
  key: string;
  label: string;
  kind: TreeNode['kind'];
  level: number;
  ids: string[];
  /** undefined: not a group; else whether it is open */
  open?: boolean;
  pinned: boolean;
  title: string;
}

/** What the user changed: keys of toggled groups (against their default), hidden and pinned nodes. */
export interface TreeState {
  toggled: Set<string>;
  hidden: Set<string>;
  pinned: string[];
}

export function newTreeState(): TreeState {
  return { toggled: new Set(), hidden: new Set(), pinned: [] };
}

const byNum = (a: number | undefined, b: number | undefined) => (a ?? 0) - (b ?? 0);

function streamLabel(t: TreeTrack): string {
  return `Stream ${t.stream ?? '?'}${t.streamClass ? ` (${t.streamClass})` : ''}`;
}

/** NVTX rows of one thread (or one GPU's projection) by depth: depth 0 in the row, the rest below it. */
function nvtxNode(key: string, label: string, rows: TreeTrack[]): TreeNode | undefined {
  if (!rows.length) return undefined;
  const sorted = [...rows].sort((a, b) => byNum(a.depth, b.depth));
  const [top, ...deeper] = sorted;
  return {
    key, label, kind: 'nvtx', ids: [top!.id], openByDefault: false, title: `${label} (depth 0; expand for ${deeper.length} deeper)`,
    children: deeper.map((t) => ({ key: t.id, label: `depth ${t.depth ?? 0}`, kind: 'nvtx' as const, ids: [t.id], children: [], openByDefault: true, title: t.name ?? t.id })),
  };
}

/** The tree of timeline/tracks' tracks (GPUs by device, then processes by pid, threads by tid). */
export function trackTree(tracks: TreeTrack[]): TreeNode[] {
  const out: TreeNode[] = [];
  const devices = [...new Set(tracks.filter((t) => t.kind === 'gpu' || t.kind === 'nvtxProjected').map((t) => t.device ?? 0))].sort((a, b) => a - b);
  for (const d of devices) {
    const streams = tracks.filter((t) => t.kind === 'gpu' && (t.device ?? 0) === d).sort((a, b) => byNum(a.stream, b.stream) || byNum(a.pid, b.pid));
    const children: TreeNode[] = streams.map((t) => ({ key: t.id, label: streamLabel(t), kind: 'gpu' as const, ids: [t.id], children: [], openByDefault: true, title: t.name ?? t.id }));
    const proj = nvtxNode(`proj:${d}`, 'NVTX (GPU projection)', tracks.filter((t) => t.kind === 'nvtxProjected' && (t.device ?? 0) === d));
    if (proj) children.push(proj);
    out.push({ key: `gpu:${d}`, label: `GPU ${d}`, kind: 'util', ids: streams.map((t) => t.id), children, openByDefault: true, title: `GPU ${d}: utilisation (its ${streams.length} streams merged)` });
  }
  const host = tracks.filter((t) => t.kind === 'nvtx' || t.kind === 'api');
  for (const pid of [...new Set(host.map((t) => t.pid ?? 0))].sort((a, b) => a - b)) {
    const mine = host.filter((t) => (t.pid ?? 0) === pid);
    const threads: TreeNode[] = [];
    for (const tid of [...new Set(mine.map((t) => t.tid ?? 0))].sort((a, b) => a - b)) {
      const rows = mine.filter((t) => (t.tid ?? 0) === tid);
      const name = rows.find((t) => t.threadName)?.threadName ?? 'thread';
      const kids: TreeNode[] = [];
      const nvtx = nvtxNode(`nvtx:${pid}:${tid}`, 'NVTX', rows.filter((t) => t.kind === 'nvtx'));
      if (nvtx) kids.push(nvtx);
      for (const t of rows.filter((r) => r.kind === 'api')) kids.push({ key: t.id, label: 'CUDA API', kind: 'api', ids: [t.id], children: [], openByDefault: true, title: t.name ?? t.id });
      threads.push({ key: `thread:${pid}:${tid}`, label: `${name} ${tid}`, kind: 'group', ids: [], children: kids, openByDefault: true, title: `${name} (pid ${pid}, tid ${tid})` });
    }
    const main = mine.find((t) => t.tid === pid)?.threadName ?? mine.find((t) => t.threadName)?.threadName ?? 'process';
    out.push({ key: `proc:${pid}`, label: `${main} (pid ${pid})`, kind: 'group', ids: [], children: threads, openByDefault: true, title: `process ${pid}` });
  }
  return out;
}

/** Every track a node draws when collapsed: its own, else its children's, merged. */
function summary(n: TreeNode): string[] {
  return n.ids.length ? n.ids : n.children.flatMap(summary);
}

function isOpen(n: TreeNode, s: TreeState): boolean {
  return n.openByDefault !== s.toggled.has(n.key);
}

/** The rows to draw: pinned ones first (in the order pinned), then the tree without hidden nodes. */
export function visibleRows(tree: TreeNode[], s: TreeState): TreeRow[] {
  const pinned = new Map<string, TreeRow>();
  const rows: TreeRow[] = [];
  const walk = (n: TreeNode, level: number) => {
    if (s.hidden.has(n.key)) return;
    const group = n.children.length > 0;
    const open = group && isOpen(n, s);
    const row: TreeRow = { key: n.key, label: n.label, kind: n.kind, level, ids: open ? n.ids : summary(n), pinned: s.pinned.includes(n.key), title: n.title };
    if (group) row.open = open;
    if (row.pinned) pinned.set(n.key, row); else rows.push(row);
    if (open) for (const c of n.children) walk(c, level + 1);
  };
  for (const n of tree) walk(n, 0);
  return [...s.pinned.filter((k) => pinned.has(k)).map((k) => pinned.get(k)!), ...rows];
}

/** Toggles a group open/closed, a node hidden, or a node pinned. */
export function toggle(s: TreeState, what: 'open' | 'hidden' | 'pinned', key: string): void {
  if (what === 'pinned') {
    const i = s.pinned.indexOf(key);
    if (i >= 0) s.pinned.splice(i, 1); else s.pinned.push(key);
    return;
  }
  const set = what === 'open' ? s.toggled : s.hidden;
  if (set.has(key)) set.delete(key); else set.add(key);
}

/** The legend: what each colour means (each client maps the kinds to its palette). */
export const LEGEND: Array<{ kind: string; label: string }> = [
  { kind: 'compute', label: 'kernel' },
  { kind: 'communication', label: 'NCCL' },
  { kind: 'memcpy', label: 'memcpy' },
  { kind: 'memset', label: 'memset' },
  { kind: 'nvtx', label: 'NVTX' },
  { kind: 'api', label: 'CUDA API' },
];
