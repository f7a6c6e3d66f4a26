// Builds the two bundles (extension host, webview) and the test bundles with esbuild.
import * as esbuild from 'esbuild';
import { readdirSync, mkdirSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const prod = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !prod, minify: prod, logLevel: 'warning' };

mkdirSync('dist', { recursive: true });
await esbuild.build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', target: 'node18', external: ['vscode'] });
await esbuild.build({ ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife', target: 'es2022' });
copyFileSync('src/webview/webview.css', 'dist/webview.css');
/* the views over several profiles (diff, ranks): their own entry, the timeline's styles and theirs */
await esbuild.build({ ...common, entryPoints: ['src/webview/viewMain.ts'], outfile: 'dist/views.js', platform: 'browser', format: 'iife', target: 'es2022' });
writeFileSync('dist/views.css', readFileSync('src/webview/webview.css', 'utf8') + readFileSync('src/webview/views.css', 'utf8'));

if (!prod) {
  /* the speed bench (npm run bench -- PROFILE), not under out/test/ui, so node --test skips it */
  await esbuild.build({ ...common, entryPoints: ['test/ui/bench.ts'], outfile: 'out/test/bench/bench.js', platform: 'node', format: 'cjs', target: 'node18', external: ['vscode', 'playwright-core', 'esbuild'] });
  for (const dir of ['unit', 'ui']) {
    const src = join('test', dir);
    const entries = readdirSync(src).filter((f) => f.endsWith('.test.ts')).map((f) => join(src, f));
    if (entries.length === 0) continue;
    await esbuild.build({ ...common, entryPoints: entries, outdir: join('out', 'test', dir), platform: 'node', format: 'cjs', target: 'node18', external: ['vscode', 'playwright-core', 'esbuild'] });
  }
}
