/* Test only: the floor under the timeline's first frame in code-server. A
 * custom read-only editor opened as nsys-ai opens a profile (a command, the
 * open dialog, vscode.openWith) whose webview is a static page with an inline
 * script: it posts `ready`, the host answers `init` at once, and the page marks
 * that it arrived. What the bench measures here is VS Code's own cost of
 * creating a custom editor's webview and one message each way; nothing of
 * nsys-ai runs. */
const vscode = require('vscode');

exports.activate = (ctx) => {
  ctx.subscriptions.push(vscode.window.registerCustomEditorProvider('nsysAiBench.floor', {
    openCustomDocument: (uri) => ({ uri, dispose() {} }),
    resolveCustomEditor: (_doc, panel) => {
      const nonce = Array.from({ length: 32 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('');
      panel.webview.options = { enableScripts: true, localResourceRoots: [] };
      panel.webview.onDidReceiveMessage((m) => { if (m?.type === 'ready') void panel.webview.postMessage({ type: 'init' }); });
      panel.webview.html = `<!DOCTYPE html><html><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}'">
</head><body><p>floor</p><script nonce="${nonce}">
window.__floor = { scriptAt: performance.now() };
window.addEventListener('message', (ev) => {
  if (ev.data?.type !== 'init') return;
  window.__floor.initAt = performance.now();
  document.body.dataset.floor = 'init';
});
acquireVsCodeApi().postMessage({ type: 'ready' });
</script></body></html>`;
    },
  }));
  ctx.subscriptions.push(vscode.commands.registerCommand('nsysAiBench.open', async () => {
    const target = (await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Nsight Systems': ['sqlite', 'nsys-rep'] }, title: 'Open a file' }))?.[0];
    if (target) await vscode.commands.executeCommand('vscode.openWith', target, 'nsysAiBench.floor');
  }));
};
