/* What the profile editor shows when a profile cannot be opened: the server's
 * own message, what it means, and actions that fix it (set the server path,
 * try again, show the log, open the file with the default editor). Kept free
 * of the vscode API so the unit tests render it. */

import { ErrorCode } from '../protocol/methods';

/** Why opening failed, from the server's error code or the client's own checks. */
export type OpenErrorKind = 'serverMissing' | 'needsNsys' | 'notFound' | 'notProfile' | 'corrupt' | 'exportFailed' | 'cancelled' | 'other';

/** What a button does; the extension carries it out (profileEditor.ts). */
export type OpenErrorActionId = 'setServerPath' | 'retry' | 'showLog' | 'openDefault';
export interface OpenErrorAction { id: OpenErrorActionId; label: string }

export interface OpenErrorView { kind: OpenErrorKind; title: string; hint: string; message: string; actions: OpenErrorAction[] }

/** The codes of protocol/'s error table that opening a profile answers with. */
const KIND_BY_CODE: Record<number, OpenErrorKind> = {
  [ErrorCode.FileNotFound]: 'notFound', [ErrorCode.NotSqlite]: 'notProfile', [ErrorCode.NotNsysExport]: 'notProfile',
  [ErrorCode.NsysUnavailable]: 'needsNsys', [ErrorCode.ExportFailed]: 'exportFailed', [ErrorCode.Corrupt]: 'corrupt',
  [ErrorCode.Cancelled]: 'cancelled',
};

const TITLES: Record<OpenErrorKind, [string, string]> = {
  serverMissing: ['The nsys-ai server was not found', 'Set "nsys-ai.serverPath" to the nsys-ai binary, or put nsys-ai on PATH.'],
  needsNsys: ['Opening a .nsys-rep needs NVIDIA Nsight Systems', 'Put nsys on PATH, or export the report yourself: nsys export --type sqlite FILE.nsys-rep, and open the .sqlite.'],
  notFound: ['The profile file was not found', 'It may have been moved or deleted since it was listed.'],
  notProfile: ['This file is not an Nsight Systems export', 'nsys-ai opens the SQLite files that nsys export --type sqlite writes (or a .nsys-rep with nsys on PATH). Open it with another editor to see what it is.'],
  corrupt: ['The profile database is damaged', 'The export may be truncated or still being written. Export it again with nsys export --type sqlite.'],
  exportFailed: ['nsys could not export this report', 'The log has nsys\'s own message. Try nsys export --type sqlite FILE.nsys-rep in a terminal.'],
  cancelled: ['Opening was cancelled', 'Try again when you are ready: indexing a large profile takes a while the first time, and is cached after that.'],
  other: ['nsys-ai could not open this profile', 'The log has the details.'],
};

function kindOf(err: unknown, message: string): OpenErrorKind {
  const code = typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : undefined;
  if (code !== undefined && KIND_BY_CODE[code]) return KIND_BY_CODE[code]!;
  if (/needs NVIDIA Nsight Systems|`nsys`/.test(message)) return 'needsNsys';
  if (/nsys-ai was not found|nsys-ai\.serverPath|ENOENT|EACCES/.test(message)) return 'serverMissing';
  return 'other';
}

/** The editor's view of an error that opening a profile threw. */
export function describeOpenError(err: unknown): OpenErrorView {
  const message = err instanceof Error ? err.message : String(err);
  const kind = kindOf(err, message);
  const [title, hint] = TITLES[kind];
  const actions: OpenErrorAction[] = [];
  if (kind === 'serverMissing') actions.push({ id: 'setServerPath', label: 'Set Server Path' });
  actions.push({ id: 'retry', label: 'Try Again' }, { id: 'showLog', label: 'Show Log' });
  if (kind !== 'serverMissing' && kind !== 'cancelled') actions.push({ id: 'openDefault', label: 'Open with Default Editor' });
  return { kind, title, hint, message, actions };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page: the error, its meaning, the file, and the actions as buttons that post
 * `{type: 'openErrorAction', id}` to the extension (only the nonce's script runs). */
export function renderOpenErrorHtml(v: OpenErrorView, file: string, cspSource: string, nonce: string): string {
  const csp = ["default-src 'none'", `style-src ${cspSource} 'unsafe-inline'`, `script-src 'nonce-${nonce}'`].join('; ');
  const buttons = v.actions.map((a) => `<button class="action" data-action="${esc(a.id)}">${esc(a.label)}</button>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>${esc(v.title)}</title>
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 24px 32px; max-width: 820px; }
h1 { font-size: 1.4em; font-weight: 600; margin: 0 0 12px; }
.message { font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 8px 12px; border-left: 3px solid var(--vscode-errorForeground); white-space: pre-wrap; overflow-wrap: anywhere; }
.file { opacity: 0.8; overflow-wrap: anywhere; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 16px; }
.action { padding: 4px 12px; border: none; border-radius: 2px; cursor: pointer; font: inherit; background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
.action:first-child { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
</style>
</head>
<body>
<h1 id="open-error" data-kind="${v.kind}">${esc(v.title)}</h1>
<p class="file">${esc(file)}</p>
<p class="message">${esc(v.message)}</p>
<p>${esc(v.hint)}</p>
<div class="actions">
${buttons}
</div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
for (const b of document.querySelectorAll('button[data-action]')) b.addEventListener('click', () => vscode.postMessage({ type: 'openErrorAction', id: b.dataset.action }));
</script>
</html>`;
}
