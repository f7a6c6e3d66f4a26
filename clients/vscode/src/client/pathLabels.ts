/* Names that tell apart files of one base name, as VS Code's editor tabs do:
 * every run's report is `report.sqlite` (`.nsys-ai/runs/r1/report.sqlite`, ...),
 * so a list of open profiles shows each with the shortest run of parent folders
 * that no other path of the same base name shares. */

/** For each path, '' when its base name is unique in `paths`, else the fewest trailing
 *  parent folders (joined with '/') that distinguish it from every other path of the same
 *  base name (the whole parent path when nothing shorter does). */
export function distinguishingDirs(paths: readonly string[]): string[] {
  const parts = paths.map((p) => p.split('/').filter((s) => s.length > 0));
  const base = (i: number) => parts[i][parts[i].length - 1] ?? '';
  return parts.map((ps, i) => {
    const rivals = parts.map((_, j) => j).filter((j) => j !== i && base(j) === base(i) && paths[j] !== paths[i]);
    if (!rivals.length) return '';
    const dirs = ps.slice(0, -1);
    for (let k = 1; k <= dirs.length; k++) {
      const tail = dirs.slice(-k).join('/');
      if (rivals.every((j) => parts[j].slice(0, -1).slice(-k).join('/') !== tail)) return tail;
    }
    return dirs.length ? dirs.join('/') : '/';
  });
}
