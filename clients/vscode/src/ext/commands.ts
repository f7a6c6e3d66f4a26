/* Command handlers: open a profile, show a kernel/range/line in the timeline,
 * annotate with NVTX, refresh the source map. */
import type { Int } from '../client/exactJson';
import * as vscode from 'vscode';
import type { AnnotateParams } from '../protocol/types';
import type { ProfileStore } from './profileStore';
import type { ProfileEditorProvider } from './profileEditor';
import type { SourceInsights } from './sourceInsights';
import { VIEW_TYPE, REP_VIEW_TYPE } from './profileEditor';
import { runAnnotate, runUnannotate } from './annotateAction';

export interface ShowArgs { profileId?: string; kernelId?: number; name?: string; start?: Int; end?: Int; file?: string; line?: number; window?: { start: Int; end: Int } }

export function registerCommands(store: ProfileStore, editor: ProfileEditorProvider, insights: SourceInsights): vscode.Disposable[] {
  const guard = <A extends unknown[]>(fn: (...a: A) => Promise<void>) => async (...a: A) => {
    try { await fn(...a); } catch (e) { void vscode.window.showErrorMessage(`nsys-ai: ${(e as Error).message}`); }
  };
  return [
    vscode.commands.registerCommand('nsys-ai.openProfile', guard(async (uri?: vscode.Uri) => {
      const target = uri ?? (await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Nsight Systems': ['sqlite', 'nsys-rep'] }, title: 'Open an Nsight Systems profile' }))?.[0];
      if (target) await vscode.commands.executeCommand('vscode.openWith', target, target.fsPath.endsWith('.nsys-rep') ? REP_VIEW_TYPE : VIEW_TYPE);
    })),
    vscode.commands.registerCommand('nsys-ai.showInTimeline', guard(async (args: ShowArgs) => {
      const p = (args.profileId && store.byId(args.profileId)) || store.active;
      if (!p) throw new Error('no profile is open');
      if (args.window) { await editor.post(p.uri, { type: 'reveal', window: args.window }); return; } /* a finding's evidence window */
      const client = await store.server.get();
      let { kernelId, start, end } = args;
      if (kernelId === undefined && args.file && args.line !== undefined) {
        const at = await client.kernelsAt(p.profileId, args.file, args.line);
        kernelId = at.kernels?.[0]?.kernelId;
      }
      if (kernelId === undefined && args.name) {
        const x = await client.explain(p.profileId, { name: args.name });
        kernelId = x.stats?.longestKernelId ?? undefined;
      }
      if (kernelId !== undefined && (start === undefined || end === undefined)) {
        const d = await client.kernelDetails(p.profileId, kernelId);
        start = d.start; end = d.end; /* exact (BigInt on epoch clocks) */
      }
      await editor.post(p.uri, { type: 'reveal', kernelId, start, end });
    })),
    vscode.commands.registerCommand('nsys-ai.annotate', guard(async (uri?: vscode.Uri, scope?: AnnotateParams['scope'], granularity?: 'function' | 'statement') => {
      const target = uri ?? vscode.window.activeTextEditor?.document.uri;
      if (!target) throw new Error('no file to annotate');
      await runAnnotate(store.server, target, scope ?? 'file', granularity);
    })),
    vscode.commands.registerCommand('nsys-ai.unannotate', guard(async (uri?: vscode.Uri) => {
      const target = uri ?? vscode.window.activeTextEditor?.document.uri;
      if (!target) throw new Error('no file to unannotate');
      await runUnannotate(store.server, target);
    })),
    vscode.commands.registerCommand('nsys-ai.refreshSourceMap', () => insights.refresh()),
    vscode.commands.registerCommand('nsys-ai.showOutput', () => store.server.output.show()),
  ];
}
