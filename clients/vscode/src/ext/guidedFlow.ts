/* The guided flow's commands (the steps are listed at the top of the Runs
 * view, src/client/flowModel.ts says which comes next): diagnose a run
 * (profile/doctor + report/generate), annotate the hot code (source/refine's
 * candidates, or the script's functions on a first pass), profile again as
 * the after of the latest run, refine (runs/compare + source/refine). Each
 * step leaves a decision note on the latest run. */
import * as vscode from 'vscode';
import * as path from 'node:path';
import type { ServerManager } from './serverManager';
import type { Run } from '../client/runsModel';
import { annotateTargets, diagnoseMarkdown, flowNote, nextStep, refineMarkdown, refineNote, runScript,
  type FlowStepId } from '../client/flowModel';
import type { SourceRefineResult } from '../protocol/generated/source.refine.result';
import { runAnnotate } from './annotateAction';

export interface FlowHost {
  server: ServerManager;
  root(): string | undefined;
  refresh(): void;
  /** "Profile this Script" on `script`, as the after of `before` */
  profile(script: vscode.Uri, before?: string): Promise<void>;
}

async function showMarkdown(content: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function registerGuidedFlow(host: FlowHost): vscode.Disposable[] {
  const guard = <A extends unknown[]>(fn: (...a: A) => Promise<void>) => async (...a: A) => {
    try { await fn(...a); } catch (e) { void vscode.window.showErrorMessage(`nsys-ai: ${(e as Error).message}`); }
  };
  const rootOrThrow = (): string => {
    const root = host.root();
    if (!root) throw new Error('no workspace folder');
    return root;
  };
  const history = async (root: string): Promise<Run[]> =>
    (await (await host.server.get()).request('runs/list', { workspaceRoot: root })).runs;
  const latestWithReport = async (root: string): Promise<Run> => {
    const latest = (await history(root))[0];
    if (!latest) throw new Error('no run yet: profile the script first');
    if (!latest.report) throw new Error(`run ${latest.name} has no report (${latest.error ?? latest.status})`);
    return latest;
  };
  const note = async (root: string, run: Run, step: FlowStepId, text: string) => {
    await (await host.server.get()).request('runs/note', { workspaceRoot: root, run: run.name, text: flowNote(step, text), kind: 'decision' });
    host.refresh();
  };
  const refineOf = async (root: string, run: Run): Promise<SourceRefineResult> => {
    const client = await host.server.get();
    const { profileId } = await client.openProfile(run.report as string);
    return client.request('source/refine', { profileId, workspaceRoot: root });
  };
  const scriptUri = (root: string, run: Run): vscode.Uri => {
    const s = runScript(run) ?? vscode.window.activeTextEditor?.document.uri.fsPath;
    if (!s) throw new Error(`run ${run.name} has no Python script in its command`);
    return vscode.Uri.file(path.isAbsolute(s) ? s : path.join(root, s));
  };

  const steps: Record<FlowStepId, () => Promise<void>> = {
    profile: async () => { await vscode.commands.executeCommand('nsys-ai.profileScript'); },
    diagnose: async () => {
      const root = rootOrThrow();
      const run = await latestWithReport(root);
      const client = await host.server.get();
      const { profileId } = await client.openProfile(run.report as string);
      const doctor = await client.request('profile/doctor', { profileId });
      const report = await client.report(profileId);
      await showMarkdown(diagnoseMarkdown(run, doctor, report));
      const top = report.findings[0];
      await note(root, run, 'diagnose', `doctor ${doctor.verdict}, ${report.findings.length} finding${report.findings.length === 1 ? '' : 's'}` +
        (top ? `; first: ${top.title}` : ''));
    },
    annotate: async () => {
      const root = rootOrThrow();
      const run = await latestWithReport(root);
      const refine = await refineOf(root, run);
      const script = runScript(run);
      const targets = annotateTargets(refine, script ? path.relative(root, scriptUri(root, run).fsPath) : undefined);
      if (!targets.length) {
        void vscode.window.showInformationMessage(`nsys-ai: nothing to annotate in ${run.name} (no split range).`);
        return;
      }
      const picked = await vscode.window.showQuickPick(
        targets.map((t) => ({ label: t.file, description: t.granularity, detail: t.why, picked: true, t })),
        { canPickMany: true, title: `Annotate for the run after ${run.name}` });
      if (!picked?.length) return;
      for (const p of picked) await runAnnotate(host.server, vscode.Uri.file(path.join(root, p.t.file)), p.t.scope, p.t.granularity);
      await vscode.workspace.saveAll(false);
      /* show what changed: the first annotated file */
      await vscode.window.showTextDocument(vscode.Uri.file(path.join(root, picked[0].t.file)), { preview: false });
      await note(root, run, 'annotate', picked.map((p) => `${p.t.file} (${p.t.granularity})`).join(', '));
    },
    reprofile: async () => {
      const root = rootOrThrow();
      const run = await latestWithReport(root);
      await host.profile(scriptUri(root, run), run.name);
    },
    refine: async () => {
      const root = rootOrThrow();
      const run = await latestWithReport(root);
      if (!run.before) throw new Error(`run ${run.name} is not the after of another run: profile again first`);
      const c = await (await host.server.get()).request('runs/compare', { workspaceRoot: root, before: run.before, after: run.name });
      const refine = c.converged ? undefined : await refineOf(root, run);
      await showMarkdown(refineMarkdown(c, refine));
      await note(root, run, 'refine', refineNote(c));
    },
  };
  return [
    ...(Object.keys(steps) as FlowStepId[]).map((id) => vscode.commands.registerCommand(`nsys-ai.flow.${id}`, guard(steps[id]))),
    vscode.commands.registerCommand('nsys-ai.flow.next', guard(async () => {
      const root = rootOrThrow();
      const next = nextStep(await history(root));
      if (!next) {
        void vscode.window.showInformationMessage('nsys-ai: converged: every tagged range holds one kernel name.');
        return;
      }
      await steps[next]();
    })),
  ];
}
