/* Offers "Open in nsys-ai" when an Nsight Systems export (or a .nsys-rep) is
 * opened in another editor, e.g. by a double-click that shows VS Code's
 * "binary file" page; once per file and window. */
import * as vscode from 'vscode';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { EXPORT_PROBE_BYTES, looksLikeNsysExport } from '../client/nsysExport';
import { REP_VIEW_TYPE, VIEW_TYPE } from './profileEditor';

async function readHead(file: string): Promise<Uint8Array> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = new Uint8Array(EXPORT_PROBE_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** The file URI a tab shows in an editor other than nsys-ai's, if any. */
function otherEditorUri(tab: vscode.Tab): vscode.Uri | undefined {
  const input = tab.input;
  if (input instanceof vscode.TabInputCustom) return input.viewType === VIEW_TYPE || input.viewType === REP_VIEW_TYPE ? undefined : input.uri;
  if (input instanceof vscode.TabInputText) return input.uri;
  return undefined;
}

export function registerOpenSuggestion(): vscode.Disposable {
  const offered = new Set<string>();
  const consider = async (uri: vscode.Uri) => {
    if (uri.scheme !== 'file' || offered.has(uri.toString())) return;
    const rep = uri.fsPath.endsWith('.nsys-rep');
    if (!rep && !uri.fsPath.endsWith('.sqlite')) return;
    offered.add(uri.toString());
    if (!rep && !looksLikeNsysExport(await readHead(uri.fsPath).catch(() => new Uint8Array()))) return;
    const pick = await vscode.window.showInformationMessage(
      `${path.basename(uri.fsPath)} is an Nsight Systems ${rep ? 'report' : 'export'}: open it in nsys-ai for its timeline, NVTX tree, kernels and findings?`,
      'Open in nsys-ai');
    if (pick) await vscode.commands.executeCommand('vscode.openWith', uri, rep ? REP_VIEW_TYPE : VIEW_TYPE);
  };
  for (const g of vscode.window.tabGroups.all) for (const t of g.tabs) { const u = otherEditorUri(t); if (u) void consider(u); }
  return vscode.window.tabGroups.onDidChangeTabs((e) => {
    for (const t of e.opened) { const u = otherEditorUri(t); if (u) void consider(u); }
  });
}
