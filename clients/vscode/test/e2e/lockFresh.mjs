/* Whether DIR's node_modules holds what DIR's package-lock.json asks for, by
 * content (env.sh's install check): npm's own record of what it installed
 * (node_modules/.package-lock.json, the "hidden lockfile") lists the same
 * packages at the same versions and integrity hashes, and the lockfile's root
 * asks for what package.json asks for. Dates are not compared: a copied or
 * checked-out tree's mtimes say nothing about its content (a fresh clone's
 * lockfile is newer than a node_modules copied beside it).
 *   node lockFresh.mjs DIR    exit 0: fresh; 1: install (the reason on stderr) */
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = path.resolve(process.argv[2] ?? '.');
const read = (f) => { try { return JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')); } catch { return undefined; } };
const stale = (why) => { console.error(`${dir}: node_modules out of date (${why})`); process.exit(1); };

const pkg = read('package.json'), lock = read('package-lock.json'), hidden = read('node_modules/.package-lock.json');
if (!pkg || !lock?.packages) stale('no package.json or package-lock.json');
if (!hidden?.packages) stale('no node_modules/.package-lock.json');
const root = lock.packages[''] ?? {};
for (const k of ['dependencies', 'devDependencies', 'optionalDependencies']) {
  if (JSON.stringify(pkg[k] ?? {}) !== JSON.stringify(root[k] ?? {})) stale(`package.json's ${k} differ from the lockfile's`);
}
for (const [name, want] of Object.entries(lock.packages)) {
  if (name === '') continue;
  const have = hidden.packages[name];
  if (!have) {
    if (want.optional || want.devOptional || want.peer) continue; /* not installed on this platform */
    stale(`${name} missing`);
  }
  if (have.version !== want.version) stale(`${name} ${have.version ?? '?'} installed, ${want.version} locked`);
  if (want.integrity && have.integrity && have.integrity !== want.integrity) stale(`${name}'s integrity differs`);
}
for (const name of Object.keys(hidden.packages)) if (!(name in lock.packages)) stale(`${name} installed, not locked`);
