/* The views over several profiles as webview panels: "Compare with…" (the
 * diff view of two profiles; also on a run of the Runs view) and "Open Rank
 * Set…" (the multi-rank view of a set of exports). The panel's host side is
 * client/viewBridge, its data client/viewLoad. */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { renderWebviewHtml, makeNonce } from '../client/webviewHtml';
import { createViewBridge } from '../client/viewBridge';
import { loadDiffView, loadRanksView } from '../client/viewLoad';
import type { ViewInit } from '../protocol/viewMessages';
import type { ProfileStore } from './profileStore';

const PROFILE_FILTERS = { 'Nsight Systems': ['sqlite', 'nsys-rep'] };

function showView(ctx: vscode.ExtensionContext, store: ProfileStore, viewType: string, title: string, init: () => Promise<ViewInit>): void {
  const dist = vscode.Uri.joinPath(ctx.extensionUri, 'dist');
  const panel = vscode.window.createWebviewPanel(viewType, title, vscode.ViewColumn.Active, { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [dist] });
  panel.webview.html = renderWebviewHtml({
    nonce: makeNonce(), cspSource: panel.webview.cspSource, title,
    scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'views.js')).toString(),
    styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'views.css')).toString(),
  });
  const bridge = createViewBridge({ client: () => store.server.get(), init, post: (e) => void panel.webview.postMessage(e), logger: store.server.logger });
  const sub = panel.webview.onDidReceiveMessage((m: unknown) => bridge.handle(m));
  panel.onDidDispose(() => sub.dispose());
}

/** A profile from a command's argument: a file, a run of the Runs view (its report), else undefined. */
function uriOf(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  const report = (arg as { report?: unknown } | undefined)?.report;
  return typeof report === 'string' ? vscode.Uri.file(report) : undefined;
}

async function pickProfile(store: ProfileStore, title: string, except?: vscode.Uri): Promise<vscode.Uri | undefined> {
  const open = store.all.filter((p) => p.uri.toString() !== except?.toString());
  const browse = 'Browse…';
  const pick = open.length ? await vscode.window.showQuickPick([...open.map((p) => ({ label: p.title, description: p.uri.fsPath, uri: p.uri })), { label: browse, description: '', uri: undefined }], { title }) : { uri: undefined, label: browse };
  if (!pick) return undefined;
  if (pick.uri) return pick.uri;
  return (await vscode.window.showOpenDialog({ canSelectMany: false, filters: PROFILE_FILTERS, title }))?.[0];
}

export function registerMultiViews(ctx: vscode.ExtensionContext, store: ProfileStore): vscode.Disposable[] {
  const guard = <A extends unknown[]>(fn: (...a: A) => Promise<void>) => async (...a: A) => {
    try { await fn(...a); } catch (e) { void vscode.window.showErrorMessage(`nsys-ai: ${(e as Error).message}`); }
  };
  return [
    vscode.commands.registerCommand('nsys-ai.compareWith', guard(async (arg?: unknown) => {
      const baseUri = uriOf(arg) ?? store.active?.uri ?? await pickProfile(store, 'Compare: the base (before) profile');
      if (!baseUri) return;
      const newUri = await pickProfile(store, `Compare ${path.basename(baseUri.fsPath)} with… (the new profile)`, baseUri);
      if (!newUri) return;
      const [base, compare] = [await store.open(baseUri), await store.open(newUri)];
      showView(ctx, store, 'nsysAi.diff', `Diff: ${base.title} → ${compare.title}`, async () => loadDiffView(await store.server.get(), base, compare));
    })),
    vscode.commands.registerCommand('nsys-ai.openRankSet', guard(async (arg?: unknown, all?: unknown) => {
      /* from the explorer: the selected files; else a dialog */
      const picked = Array.isArray(all) && all.every((u) => u instanceof vscode.Uri) ? all as vscode.Uri[] : arg instanceof vscode.Uri ? [arg] : undefined;
      const uris = picked ?? await vscode.window.showOpenDialog({ canSelectMany: true, filters: PROFILE_FILTERS, title: 'Open a rank set: one export per rank (or one multi-GPU export)' });
      if (!uris?.length) return;
      const paths = uris.map((u) => u.fsPath) as [string, ...string[]];
      showView(ctx, store, 'nsysAi.ranks', `Ranks: ${uris.length === 1 ? path.basename(paths[0]) : `${uris.length} files`}`, async () => loadRanksView(await store.server.get(), paths));
    })),
  ];
}
