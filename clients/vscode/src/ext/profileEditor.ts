/* The custom read-only editor for *.sqlite (priority "option") and *.nsys-rep:
 * opens the profile on the server and shows the timeline webview. When opening
 * fails, the editor shows the server's message with actions (client/openError.ts),
 * a notification offers the same actions, and the nsys-ai output logs it. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { renderWebviewHtml, makeNonce } from '../client/webviewHtml';
import { findOnPath } from '../client/serverPath';
import { describeOpenError, renderOpenErrorHtml, type OpenErrorActionId } from '../client/openError';
import type { ProfileStore, OpenProfile } from './profileStore';
import { connectWebview } from './webviewBridge';
import { holdWhileOpening } from '../client/holdWhileOpening';
import { toEnvelope, type HostToWebview } from '../protocol/messages';

export const VIEW_TYPE = 'nsysAi.profile';
export const REP_VIEW_TYPE = 'nsysAi.nsysRep';

class ProfileDocument implements vscode.CustomDocument {
  /** Why the profile could not be opened (the editor shows it), or undefined once it is open. */
  error: unknown;
  /** Set while the server opens the profile: the editor's webview loads meanwhile. */
  opening: Promise<void> | undefined;
  constructor(readonly uri: vscode.Uri, private readonly onClose: () => void) {}
  /** Closed while still opening: closes once the open has finished (else the server would keep it). */
  dispose(): void { if (this.opening) void this.opening.then(() => this.onClose()); else this.onClose(); }
}

export class ProfileEditorProvider implements vscode.CustomReadonlyEditorProvider<ProfileDocument> {
  private panels = new Map<string, vscode.WebviewPanel>();
  private pending = new Map<string, HostToWebview>();
  /** The newest document per file. */
  private docs = new Map<string, ProfileDocument>();

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly store: ProfileStore) {}

  /** Returns before the server has opened the profile: the timeline's page
   * loads while it opens (the first frame waits for the later of the two, not
   * their sum); a failure replaces the page with the error page. */
  openCustomDocument(uri: vscode.Uri): ProfileDocument {
    const key = uri.toString();
    /* a document closed while opening closes the profile later, unless a newer document of the same file uses it by then */
    const doc: ProfileDocument = new ProfileDocument(uri, () => {
      if (this.docs.get(key) !== doc) return;
      this.docs.delete(key);
      void this.store.close(uri);
    });
    this.docs.set(key, doc);
    doc.opening = this.openProfile(uri).then(() => { doc.error = undefined; }, (e: unknown) => {
      doc.error = e ?? new Error('unknown error');
      this.reportOpenError(doc);
    }).finally(() => { doc.opening = undefined; });
    return doc;
  }

  private async openProfile(uri: vscode.Uri): Promise<void> {
    if (uri.fsPath.endsWith('.nsys-rep') && !findOnPath('nsys')) {
      throw new Error('Opening .nsys-rep needs NVIDIA Nsight Systems (`nsys`) on PATH; or export it yourself: nsys export --type sqlite FILE.nsys-rep');
    }
    await this.store.open(uri);
  }

  /** The failure in the log and, unless the user cancelled, as a notification with the page's actions. */
  private reportOpenError(doc: ProfileDocument): void {
    const v = describeOpenError(doc.error);
    this.store.server.output.error(`opening ${doc.uri.fsPath} failed (${v.kind}): ${v.message}`);
    if (v.kind === 'cancelled') return;
    void vscode.window.showErrorMessage(`nsys-ai: ${v.title}. ${v.message}`, ...v.actions.map((a) => a.label)).then((label) => {
      const a = v.actions.find((x) => x.label === label);
      if (a) void this.runAction(doc, a.id);
    });
  }

  private async runAction(doc: ProfileDocument, id: OpenErrorActionId): Promise<void> {
    if (id === 'setServerPath') await vscode.commands.executeCommand('workbench.action.openSettings', 'nsys-ai.serverPath');
    else if (id === 'showLog') this.store.server.output.show();
    else if (id === 'openDefault') await vscode.commands.executeCommand('vscode.openWith', doc.uri, 'default');
    else if (id === 'retry') {
      doc.error = await this.openProfile(doc.uri).then(() => undefined, (e: unknown) => e ?? new Error('unknown error'));
      if (doc.error !== undefined) this.reportOpenError(doc);
      const panel = this.panels.get(doc.uri.toString());
      if (panel) this.show(doc, panel);
    }
  }

  async resolveCustomEditor(doc: ProfileDocument, panel: vscode.WebviewPanel): Promise<void> {
    const key = doc.uri.toString();
    this.panels.set(key, panel);
    panel.onDidDispose(() => { this.panels.delete(key); });
    this.show(doc, panel);
  }

  /** The timeline when the profile is open or opening, else the error page. */
  private show(doc: ProfileDocument, panel: vscode.WebviewPanel): void {
    if (doc.opening) { this.showWhileOpening(doc, panel, doc.opening); return; }
    const profile = doc.error === undefined ? this.store.get(doc.uri) : undefined;
    if (!profile) {
      const v = describeOpenError(doc.error ?? new Error('the profile is not open'));
      panel.webview.options = { enableScripts: true, localResourceRoots: [] };
      panel.webview.html = renderOpenErrorHtml(v, doc.uri.fsPath, panel.webview.cspSource, makeNonce());
      const sub = panel.webview.onDidReceiveMessage((m: { type?: string; id?: OpenErrorActionId }) => {
        if (m?.type !== 'openErrorAction' || !m.id || !v.actions.some((a) => a.id === m.id)) return;
        if (m.id === 'retry') sub.dispose();
        void this.runAction(doc, m.id);
      });
      panel.onDidDispose(() => sub.dispose());
      return;
    }
    this.setTimelineHtml(panel, profile.title);
    this.wire(doc, panel, profile, []);
  }

  /** The timeline's page loads now; what it sends before the profile is open
   * (its `ready`) is held and handed to the bridge once it is; if opening
   * fails, the error page replaces it. */
  private showWhileOpening(doc: ProfileDocument, panel: vscode.WebviewPanel, opening: Promise<void>): void {
    this.setTimelineHtml(panel, path.basename(doc.uri.fsPath));
    const open = opening.then(() => (doc.error === undefined ? this.store.get(doc.uri) : undefined));
    const hold = holdWhileOpening((fn) => panel.webview.onDidReceiveMessage(fn), open,
      (profile, held) => this.wire(doc, panel, profile, held), () => this.show(doc, panel));
    panel.onDidDispose(() => hold.dispose());
  }

  /** The timeline's bundle and CSS, read once: inlined in its HTML, the page fetches nothing
   * through VS Code's webview service worker before its first frame. */
  private inline: { script: string; style: string } | undefined;

  private setTimelineHtml(panel: vscode.WebviewPanel, title: string): void {
    const dist = vscode.Uri.joinPath(this.ctx.extensionUri, 'dist');
    this.inline ??= { script: fs.readFileSync(path.join(dist.fsPath, 'webview.js'), 'utf8'), style: fs.readFileSync(path.join(dist.fsPath, 'webview.css'), 'utf8') };
    panel.webview.options = { enableScripts: true, localResourceRoots: [] };
    panel.webview.html = renderWebviewHtml({ nonce: makeNonce(), cspSource: panel.webview.cspSource, inline: this.inline, title });
  }

  /** Connects the page to the open profile; `held`: its messages so far, replayed in order. */
  private wire(doc: ProfileDocument, panel: vscode.WebviewPanel, profile: OpenProfile, held: readonly unknown[]): void {
    const key = doc.uri.toString();
    const bridge = connectWebview(panel, profile, this.store, () => {
      const m = this.pending.get(key);
      this.pending.delete(key);
      return m;
    }, held);
    panel.onDidChangeViewState(() => { if (panel.active) this.store.setActive(doc.uri); });
    panel.onDidDispose(() => bridge.dispose());
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
    await panel.webview.postMessage(toEnvelope(m));
  }
}
