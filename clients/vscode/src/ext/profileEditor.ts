/* The custom read-only editor for *.sqlite (priority "option") and *.nsys-rep:
 * opens the profile on the server and shows the timeline webview. */
import * as vscode from 'vscode';
import { renderWebviewHtml, makeNonce } from '../client/webviewHtml';
import { findOnPath } from '../client/serverPath';
import type { ProfileStore } from './profileStore';
import { connectWebview } from './webviewBridge';
import type { HostToWebview } from '../protocol/messages';

export const VIEW_TYPE = 'nsysAi.profile';
export const REP_VIEW_TYPE = 'nsysAi.nsysRep';

class ProfileDocument implements vscode.CustomDocument {
  constructor(readonly uri: vscode.Uri, private readonly onClose: () => void) {}
  dispose(): void { this.onClose(); }
}

export class ProfileEditorProvider implements vscode.CustomReadonlyEditorProvider<ProfileDocument> {
  private panels = new Map<string, vscode.WebviewPanel>();
  private pending = new Map<string, HostToWebview>();

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly store: ProfileStore) {}

  async openCustomDocument(uri: vscode.Uri): Promise<ProfileDocument> {
    if (uri.fsPath.endsWith('.nsys-rep') && !findOnPath('nsys')) {
      throw new Error('Opening .nsys-rep needs NVIDIA Nsight Systems (`nsys`) on PATH; or export it yourself: nsys export --type sqlite FILE.nsys-rep');
    }
    await this.store.open(uri);
    return new ProfileDocument(uri, () => void this.store.close(uri));
  }

  async resolveCustomEditor(doc: ProfileDocument, panel: vscode.WebviewPanel): Promise<void> {
    const profile = this.store.get(doc.uri);
    if (!profile) throw new Error('profile is not open');
    const dist = vscode.Uri.joinPath(this.ctx.extensionUri, 'dist');
    panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    panel.webview.html = renderWebviewHtml({
      nonce: makeNonce(),
      cspSource: panel.webview.cspSource,
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
      title: profile.title,
    });
    const key = doc.uri.toString();
    this.panels.set(key, panel);
    const bridge = connectWebview(panel, profile, this.store, () => {
      const m = this.pending.get(key);
      this.pending.delete(key);
      return m;
    });
    panel.onDidChangeViewState(() => { if (panel.active) this.store.setActive(doc.uri); });
    panel.onDidDispose(() => { bridge.dispose(); this.panels.delete(key); });
  }

  /** Sends a message to the panel of `uri`, opening it first when needed. */
  async post(uri: vscode.Uri, m: HostToWebview): Promise<void> {
    const panel = this.panels.get(uri.toString());
    if (!panel) {
      this.pending.set(uri.toString(), m);
      await vscode.commands.executeCommand('vscode.openWith', uri, uri.fsPath.endsWith('.nsys-rep') ? REP_VIEW_TYPE : VIEW_TYPE);
      return;
    }
    panel.reveal();
    await panel.webview.postMessage(m);
  }
}
