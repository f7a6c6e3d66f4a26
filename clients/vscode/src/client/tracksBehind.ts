/* The tracks behind closed groups: what opening them would draw that no row
 * draws now (a closed group draws its rows merged, so its streams are drawn;
 * a GPU's NVTX projection or a thread's deeper NVTX depths are not). The
 * timeline holds these at its view while idle, so that an expand draws from
 * held tiles instead of asking the server. */
import { visibleRows, type TreeNode, type TreeState } from './trackTree';

const drawn = (tree: TreeNode[], s: TreeState) => new Set(visibleRows(tree, s).flatMap((r) => r.ids));

/** The tracks the rows would draw with the closed groups `keys` opened (as
 * their children's own state says), less those drawn now. */
export function tracksBehind(tree: TreeNode[], s: TreeState, keys: Iterable<string>): string[] {
  const opened: TreeState = { ...s, toggled: new Set(s.toggled) };
  for (const k of keys) if (opened.toggled.has(k)) opened.toggled.delete(k); else opened.toggled.add(k);
  const now = drawn(tree, s);
  return [...drawn(tree, opened)].filter((id) => !now.has(id));
}
