/* Whether a file is an Nsight Systems export, from its first bytes: a SQLite
 * database whose schema (sqlite_master, whose pages are mostly near the start
 * of the file) names a table that only nsys export writes. Used to offer "Open in nsys-ai" when such a file
 * is opened in another editor; the server decides for real when it opens it. */

/** How many bytes of the file to read: the schema of a large export spans a few pages. */
export const EXPORT_PROBE_BYTES = 256 * 1024;

const SQLITE_MAGIC = 'SQLite format 3\0';
/** Table names only nsys exports have (any one suffices: exports differ by version, and
 * the schema's pages need not all lie in the first bytes). */
const NSYS_TABLES = ['TARGET_INFO_', 'CUPTI_ACTIVITY_KIND_', 'NVTX_EVENTS', 'META_DATA_EXPORT', 'EXPORT_META_DATA', 'OSRT_API', 'COMPOSITE_EVENTS'];

export function looksLikeNsysExport(head: Uint8Array): boolean {
  if (head.length < 100) return false;
  const latin1 = (a: number, b: number) => String.fromCharCode(...head.subarray(a, b));
  if (latin1(0, 16) !== SQLITE_MAGIC) return false;
  let text = '';
  for (let i = 0; i < head.length; i += 8192) text += latin1(i, Math.min(head.length, i + 8192));
  return NSYS_TABLES.some((t) => text.includes(t));
}
