/* Python scope helpers for the "Annotate with NVTX" action (no vscode import). */

/** The name of the nearest `def` enclosing 0-based `line` (by indentation), if any. */
export function enclosingFunction(lineAt: (i: number) => string, line: number): string | undefined {
  let minIndent = Infinity;
  for (let i = line; i >= 0; i--) {
    const text = lineAt(i);
    if (!text.trim()) continue;
    const indent = text.length - text.trimStart().length;
    const m = /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/.exec(text);
    if (m && (i === line || indent < minIndent)) return m[1]!;
    minIndent = Math.min(minIndent, indent);
  }
  return undefined;
}
