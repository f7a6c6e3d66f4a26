/* The webview's HTML shell. The extension and the UI-test harness both use it,
 * so the tests load exactly what VS Code shows. Scripts and styles apply only
 * with the nonce. The bundle and its CSS are either linked (fetched through
 * VS Code's webview service worker) or inlined in the HTML (no fetch: the
 * timeline's page, whose first frame waits for them). */

interface Shell { nonce: string; cspSource: string; title: string }
/** Linked: the URIs of the bundle and its CSS. Inlined: their text. */
export type WebviewHtmlOptions = Shell & ({ scriptUri: string; styleUri: string } | { inline: { script: string; style: string } });

export function makeNonce(random: () => number = Math.random): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars[Math.floor(random() * chars.length)];
  return s;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Text for inside a <script> or <style> element: `</script` / `</style` (any case) would end it
 * early, and `<!--` in a script can make the parser skip its real end. In the bundle such text is
 * inside a string, template or regex literal, where `\x3C` reads as `<`; in the CSS, inside a
 * string, where `\3C` does. */
export function inlineText(text: string, tag: 'script' | 'style'): string {
  return tag === 'script' ? text.replace(/<(\/script|!--)/gi, '\\x3C$1') : text.replace(/<(\/style)/gi, '\\3C$1');
}

export function renderWebviewHtml(o: WebviewHtmlOptions): string {
  const inline = 'inline' in o ? o.inline : undefined;
  const csp = [
    "default-src 'none'",
    `img-src ${o.cspSource} data:`,
    inline ? `style-src 'nonce-${o.nonce}'` : `style-src ${o.cspSource}`,
    `font-src ${o.cspSource}`,
    `script-src 'nonce-${o.nonce}'`,
  ].join('; ');
  const style = inline ? `<style nonce="${o.nonce}">${inlineText(inline.style, 'style')}</style>` : `<link rel="stylesheet" href="${esc((o as { styleUri: string }).styleUri)}">`;
  const script = inline ? `<script nonce="${o.nonce}">${inlineText(inline.script, 'script')}</script>` : `<script nonce="${o.nonce}" src="${esc((o as { scriptUri: string }).scriptUri)}"></script>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${style}
<title>${esc(o.title)}</title>
</head>
<body>
<div id="app" data-title="${esc(o.title)}"></div>
${script}
</body>
</html>`;
}
