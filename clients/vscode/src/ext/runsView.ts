/* The Runs view (the workspace's .nsys-ai/runs.db): the guided flow's steps
 * on top (src/ext/guidedFlow.ts), then the runs; "Profile this script", and
 * the run commands: open, compare two, add a note. */
import * as vscode from 'vscode';
import { spawn } from 'node:child_process';
import { resolveServerPath } from '../client/serverPath';
import { compareMarkdown, parseProfileOutput, profileArgs, runLabel, type Run } from '../client/runsModel';
import { ProgressFold } from '../client/progressFold';
import { flowSteps, type FlowStep } from '../client/flowModel';
import { registerGuidedFlow } from './guidedFlow';
import type { ServerManager } from './serverManager';
import { VIEW_TYPE } from './profileEditor';

function workspaceRoot(uri?: vscode.Uri): string | undefined {
  const f = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
  return f?.uri.fsPath;
}

/** The "Guided flow" group at the top of the view; its children are the steps. */
const FLOW_GROUP = { flowGroup: true } as const;
type Node = Run | string | FlowStep | typeof FLOW_GROUP;

const isStep = (n: Node): n is FlowStep => typeof n === 'object' && 'state' in n && 'command' in n;
const isGroup = (n: Node): n is typeof FLOW_GROUP => n === FLOW_GROUP;

export class RunsTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private runs: Run[] = [];
  constructor(private readonly server: ServerManager) {}
  refresh(): void { this.changed.fire(); }

  getTreeItem(r: Node): vscode.TreeItem {
    if (typeof r === 'string') return new vscode.TreeItem(r);
    if (isGroup(r)) {
      const it = new vscode.TreeItem('Guided flow', vscode.TreeItemCollapsibleState.Expanded);
      it.iconPath = new vscode.ThemeIcon('list-ordered');
      it.tooltip = 'profile → diagnose → annotate → profile again → refine, until each tagged range holds one kernel name';
      return it;
    }
    if (isStep(r)) {
      const it = new vscode.TreeItem(r.title);
      it.description = r.state === 'next' ? `next · ${r.detail}` : r.detail;
      it.tooltip = `${r.title}\n${r.detail}`;
      it.iconPath = new vscode.ThemeIcon(r.state === 'done' ? 'pass' : r.state === 'next' ? 'arrow-right' : 'circle-outline');
      it.contextValue = `nsysAiFlowStep.${r.state}`;
      it.command = { command: r.command, title: r.title };
      return it;
    }
    const l = runLabel(r);
    const it = new vscode.TreeItem(l.label);
    it.description = l.description;
    it.tooltip = l.tooltip;
    it.contextValue = r.report ? 'nsysAiRun' : 'nsysAiRunNoReport';
    it.iconPath = new vscode.ThemeIcon(r.status === 'failed' || r.interrupted ? 'error' : 'history');
    if (r.report) it.command = { command: 'nsys-ai.openRun', title: 'Open', arguments: [r] };
    return it;
  }

  async getChildren(r?: Node): Promise<Node[]> {
    if (r && isGroup(r)) return flowSteps(this.runs);
    if (r) return [];
    const root = workspaceRoot();
    if (!root) return ['Open a folder to keep a run history.'];
    try {
      const client = await this.server.get();
      const res = await client.request('runs/list', { workspaceRoot: root });
      this.runs = res.runs;
      return res.runs.length ? [FLOW_GROUP, ...res.runs] : ['No runs yet: "nsys-ai: Profile this Script".'];
    } catch (e) {
      return [`unavailable: ${(e as Error).message}`];
    }
  }
}

export function registerRuns(server: ServerManager): vscode.Disposable[] {
  const tree = new RunsTreeProvider(server);
  const guard = <A extends unknown[]>(fn: (...a: A) => Promise<void>) => async (...a: A) => {
    try { await fn(...a); } catch (e) { void vscode.window.showErrorMessage(`nsys-ai: ${(e as Error).message}`); }
  };
  const pickRun = async (title: string): Promise<Run | undefined> => {
    const root = workspaceRoot();
    if (!root) throw new Error('no workspace folder');
    const res = await (await server.get()).request('runs/list', { workspaceRoot: root });
    const items = res.runs.filter((r) => r.report).map((r) => ({ ...runLabel(r), run: r }));
    return (await vscode.window.showQuickPick(items, { title }))?.run;
  };
  /* "Profile this Script" (as the after of `before` when the guided flow profiles again) */
  const profileScript = async (target: vscode.Uri, before?: string): Promise<void> => {
    const root = workspaceRoot(target);
    if (!root) throw new Error('the script is not in a workspace folder');
    const where = resolveServerPath(vscode.workspace.getConfiguration('nsys-ai').get<string>('serverPath'));
    if (!where.ok) throw new Error(where.message);
    const note = await vscode.window.showInputBox({ title: before ? `Profile again (after ${before})` : 'Profile this script', prompt: 'Hypothesis for this run (optional)' });
    if (note === undefined) return;
    const python = vscode.workspace.getConfiguration('python').get<string>('defaultInterpreterPath') || 'python3';
    const args = profileArgs(root, target.fsPath, { python, note: note || undefined, before });
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `nsys profile ${vscode.workspace.asRelativePath(target)}`, cancellable: true },
      (_p, token) => new Promise<ReturnType<typeof parseProfileOutput>>((resolve) => {
        const child = spawn(where.path, args, { cwd: root, env: { ...process.env, NSYS_AI_NO_PROGRESS: '1' } });
        let out = '', err = '';
        const shown = new ProgressFold(); /* nsys's progress bars: their last frame, not every one */
        child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
        child.stderr.on('data', (d: Buffer) => { err += d.toString(); server.output.append(shown.push(d.toString())); });
        child.on('close', () => server.output.append(shown.flush()));
        token.onCancellationRequested(() => child.kill('SIGTERM'));
        child.on('error', (e) => resolve({ ok: false, message: e.message }));
        child.on('close', (code) => resolve(parseProfileOutput(out, err, code)));
      }));
    tree.refresh();
    if (!outcome.ok) throw new Error(`${outcome.run ? `run ${outcome.run}: ` : ''}${outcome.message}`);
    const worst = outcome.findings.find((f) => f.severity !== 'info');
    void vscode.window.showInformationMessage(`Run ${outcome.run.name}: doctor ${outcome.verdict}${worst ? ` — ${worst.title}` : ''}`);
    if (outcome.run.report) await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(outcome.run.report), VIEW_TYPE);
  };
  return [
    vscode.window.registerTreeDataProvider('nsysAi.runs', tree),
    vscode.commands.registerCommand('nsys-ai.refreshRuns', () => tree.refresh()),
    vscode.commands.registerCommand('nsys-ai.profileScript', guard(async (uri?: vscode.Uri) => {
      const target = uri ?? vscode.window.activeTextEditor?.document.uri;
      if (!target) throw new Error('no script to profile');
      await profileScript(target);
    })),
    ...registerGuidedFlow({ server, root: () => workspaceRoot(), refresh: () => tree.refresh(), profile: profileScript }),
    vscode.commands.registerCommand('nsys-ai.openRun', guard(async (r?: Run) => {
      const run = r ?? (await pickRun('Open a run'));
      if (run?.report) await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(run.report), VIEW_TYPE);
    })),
    vscode.commands.registerCommand('nsys-ai.compareRuns', guard(async (r?: Run) => {
      const after = r ?? (await pickRun('Compare: the later run'));
      if (!after) return;
      const before = await pickRun(`Compare ${after.name} with…`);
      if (!before) return;
      const root = workspaceRoot();
      if (!root) throw new Error('no workspace folder');
      const c = await (await server.get()).request('runs/compare', { workspaceRoot: root, before: before.name, after: after.name });
      tree.refresh();
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: compareMarkdown(c) });
      await vscode.window.showTextDocument(doc, { preview: true });
    })),
    vscode.commands.registerCommand('nsys-ai.addRunNote', guard(async (r?: Run) => {
      const run = r ?? (await pickRun('Add a note to a run'));
      if (!run) return;
      const text = await vscode.window.showInputBox({ title: `Note on ${run.name}`, prompt: 'A note, hypothesis or decision' });
      if (!text) return;
      const root = workspaceRoot();
      if (!root) throw new Error('no workspace folder');
      await (await server.get()).request('runs/note', { workspaceRoot: root, run: run.name, text });
      tree.refresh();
    })),
  ];
}
