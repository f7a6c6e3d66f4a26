/* Report findings in VS Code's Problems: each finding that points at a source
 * line (client/findingSources) is a diagnostic there, with a "Show in timeline"
 * quick fix that opens the profile's timeline at the finding's evidence window
 * (zoomed to it and marked as the range). Refreshed when the active profile changes. */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { findingSources, type FindingSource } from '../client/findingSources';
import type { Int } from '../client/exactJson';
import type { ProfileStore } from './profileStore';
import { CancellationTokenSource } from '../client/nsysClient';

const SOURCE = 'nsys-ai';

/** How long the findings wait for a profile's first frame at most (a profile shown in no timeline). */
const REPORT_WAIT_MS = 5000;

export class FindingDiagnostics implements vscode.Disposable, vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];
  private readonly collection = vscode.languages.createDiagnosticCollection('nsys-ai findings');
  /** diagnostic → its finding (the quick fix's window) */
  private readonly found = new WeakMap<vscode.Diagnostic, { profileId: string; window: { start: Int; end: Int } }>();
  private sub: vscode.Disposable;
  private token = 0;
  /** The report/generate on its way, cancelled when its profile is no longer the active one (closed, say). */
  private inflight: { profileId: string; src: CancellationTokenSource } | undefined;

  constructor(private readonly store: ProfileStore) {
    this.sub = store.onDidChange(() => void this.refresh());
    void this.refresh();
  }

  async refresh(): Promise<void> {
    const token = ++this.token;
    const p = this.store.active;
    if (this.inflight && this.inflight.profileId !== p?.profileId) { this.inflight.src.cancel(); this.inflight = undefined; }
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!p || !folder) { this.collection.clear(); return; }
    try {
      /* not alongside the first frame: report/generate takes seconds of server CPU on a large profile */
      await this.store.firstFrames.wait(p.uri.toString(), REPORT_WAIT_MS);
      if (token !== this.token) return;
      const client = await this.store.server.get();
      const src = new CancellationTokenSource();
      this.inflight = { profileId: p.profileId, src };
      const report = await client.requestUntyped<{ findings?: Parameters<typeof findingSources>[0] }>('report/generate', { profileId: p.profileId }, { token: src.token })
        .finally(() => { if (this.inflight?.src === src) this.inflight = undefined; src.dispose(); });
      const found = await findingSources(report.findings ?? [], (name) => client.locate(p.profileId, name, folder.uri.fsPath));
      if (token !== this.token) return;
      const byFile = new Map<string, vscode.Diagnostic[]>();
      for (const f of found) {
        const uri = path.isAbsolute(f.file) ? vscode.Uri.file(f.file) : vscode.Uri.joinPath(folder.uri, f.file);
        const d = new vscode.Diagnostic(new vscode.Range(f.line - 1, 0, f.line - 1, 1000), f.message, severity(f));
        d.source = SOURCE;
        d.code = f.id;
        this.found.set(d, { profileId: p.profileId, window: f.window });
        const list = byFile.get(uri.toString()) ?? [];
        list.push(d);
        byFile.set(uri.toString(), list);
      }
      this.collection.clear();
      for (const [u, ds] of byFile) this.collection.set(vscode.Uri.parse(u), ds);
    } catch (e) {
      this.store.server.logger.warn(`findings for Problems: ${(e as Error).message}`);
    }
  }

  provideCodeActions(_doc: vscode.TextDocument, _range: vscode.Range, ctx: vscode.CodeActionContext): vscode.CodeAction[] {
    const out: vscode.CodeAction[] = [];
    for (const d of ctx.diagnostics) {
      const f = d.source === SOURCE ? this.found.get(d) : undefined;
      if (!f) continue;
      const a = new vscode.CodeAction('Show in timeline (nsys-ai)', vscode.CodeActionKind.QuickFix);
      a.diagnostics = [d];
      a.command = { title: 'Show in timeline', command: 'nsys-ai.showInTimeline', arguments: [{ profileId: f.profileId, window: f.window }] };
      out.push(a);
    }
    return out;
  }

  dispose(): void { this.inflight?.src.cancel(); this.sub.dispose(); this.collection.dispose(); }
}

function severity(f: FindingSource): vscode.DiagnosticSeverity {
  return f.severity === 'critical' ? vscode.DiagnosticSeverity.Error : f.severity === 'warning' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Information;
}
