import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatNs, lensTitle, formatPct } from '../../src/client/format';
import { renderWebviewHtml, makeNonce } from '../../src/client/webviewHtml';
import { resolveServerPath, findOnPath } from '../../src/client/serverPath';

test('durations and lens titles read naturally', () => {
  assert.equal(formatNs(512), '512 ns');
  assert.equal(formatNs(3_400_000), '3.4 ms');
  assert.equal(formatNs(2_000_000_000), '2 s');
  assert.equal(formatNs(12_345), '12.3 µs');
  assert.equal(formatPct(18.2), '18%');
  assert.equal(formatPct(0.25), '0.3%');
  assert.equal(lensTitle(12, 3_400_000, 18.2), '12 kernels · 3.4 ms · 18% GPU');
  assert.equal(lensTitle(1, 900, 0), '1 kernel · 900 ns · 0% GPU');
});

test('webview html allows scripts only with the nonce', () => {
  const nonce = makeNonce();
  assert.match(nonce, /^[A-Za-z0-9]{32}$/);
  const html = renderWebviewHtml({ nonce, cspSource: 'vscode-resource:', scriptUri: 'x.js', styleUri: 'x.css', title: 'a<b' });
  assert.match(html, new RegExp(`script-src 'nonce-${nonce}'`));
  assert.match(html, /default-src 'none'/);
  assert.ok(!html.includes('a<b'));
  assert.equal((html.match(/<script /g) ?? []).length, 1);
  assert.ok(html.includes(`<script nonce="${nonce}"`));
});

test('webview html inlines the bundle and its CSS under the nonce, and nothing ends their elements early', () => {
  const nonce = makeNonce();
  const script = 'const a = "</script><script>alert(1)</script>"; const b = `${1}</SCRIPT>`; const c = `<!--<script>`;';
  const style = '.x::after { content: "</style>"; }';
  const html = renderWebviewHtml({ nonce, cspSource: 'vscode-resource:', inline: { script, style }, title: 't' });
  const csp = html.match(/content="([^"]*)"/)![1]!;
  assert.match(csp, new RegExp(`style-src 'nonce-${nonce}'(;|$)`), 'inline styles only with the nonce');
  assert.match(csp, new RegExp(`script-src 'nonce-${nonce}'(;|$)`));
  assert.ok(!/unsafe-inline|unsafe-eval/.test(csp), csp);
  assert.equal((html.match(/<\/script/gi) ?? []).length, 1, 'the script element ends once, where it should');
  assert.equal((html.match(/<\/style/gi) ?? []).length, 1);
  assert.ok(!html.includes('<!--'), 'no comment opener that would make the parser skip the script end');
  assert.ok(!/<link|src=/.test(html), 'nothing fetched');
  /* what the browser runs is the bundle's own text: \x3C reads as < inside its literals */
  const open = `<script nonce="${nonce}">`;
  const inner = html.slice(html.indexOf(open) + open.length, html.lastIndexOf('</script>'));
  assert.deepEqual(new Function(`${inner}; return [a, b, c];`)(), ['</script><script>alert(1)</script>', '1</SCRIPT>', '<!--<script>']);
});

test('server path: setting wins, else PATH, else a message', () => {
  const node = process.execPath;
  assert.deepEqual(resolveServerPath(node), { ok: true, path: node });
  const bad = resolveServerPath('/nonexistent/nsys-ai');
  assert.equal(bad.ok, false);
  const none = resolveServerPath(undefined, '/nonexistent');
  assert.equal(none.ok, false);
  assert.equal(findOnPath('node', require('node:path').dirname(node)), node);
});
