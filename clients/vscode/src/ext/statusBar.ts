/* The status-bar item naming the active profile. */
import * as vscode from 'vscode';
import type { ProfileStore } from './profileStore';

export function createStatusBar(store: ProfileStore): vscode.Disposable {
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  item.command = 'nsys-ai.openProfile';
  const update = () => {
    const p = store.active;
    if (!p) { item.hide(); return; }
    const n = p.info.counts?.kernels;
    item.text = `$(pulse) ${p.title}`;
    item.tooltip = `nsys-ai: active profile ${p.uri.fsPath}${n !== undefined ? ` · ${n} kernels` : ''}`;
    item.show();
  };
  const sub = store.onDidChange(update);
  update();
  return vscode.Disposable.from(item, sub);
}
