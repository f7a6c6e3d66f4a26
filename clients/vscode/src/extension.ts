/* Entry point: registers everything and nothing else. */
import * as vscode from 'vscode';
import { ServerManager } from './ext/serverManager';
import { ProfileStore } from './ext/profileStore';
import { ProfileEditorProvider, VIEW_TYPE, REP_VIEW_TYPE } from './ext/profileEditor';
import { SourceInsights } from './ext/sourceInsights';
import { KernelHoverProvider } from './ext/hoverProvider';
import { KernelCodeLensProvider } from './ext/codeLensProvider';
import { HeatDecorations } from './ext/heatDecorations';
import { AnnotateActionProvider } from './ext/annotateAction';
import { ProfilesTreeProvider } from './ext/profilesTree';
import { createStatusBar } from './ext/statusBar';
import { registerCommands } from './ext/commands';
import { registerOpenSuggestion } from './ext/openSuggestion';
import { registerRuns } from './ext/runsView';
import { registerAgents } from './ext/agents';
import { FindingDiagnostics } from './ext/findingDiagnostics';
import { registerMultiViews } from './ext/multiViews';

const SOURCE_LANGUAGES: vscode.DocumentSelector = [
  { language: 'python' }, { language: 'cuda-cpp' }, { language: 'cpp' }, { language: 'c' },
];

export function activate(ctx: vscode.ExtensionContext): void {
  const server = new ServerManager();
  const store = new ProfileStore(server);
  const insights = new SourceInsights(store);
  const editor = new ProfileEditorProvider(ctx, store);
  const opts = { webviewOptions: { retainContextWhenHidden: true }, supportsMultipleEditorsPerDocument: false };
  ctx.subscriptions.push(
    server, store, insights,
    vscode.window.registerCustomEditorProvider(VIEW_TYPE, editor, opts),
    vscode.window.registerCustomEditorProvider(REP_VIEW_TYPE, editor, opts),
    vscode.languages.registerHoverProvider(SOURCE_LANGUAGES, new KernelHoverProvider(store)),
    vscode.languages.registerCodeLensProvider(SOURCE_LANGUAGES, new KernelCodeLensProvider(insights)),
    vscode.languages.registerCodeActionsProvider({ language: 'python' }, new AnnotateActionProvider(), { providedCodeActionKinds: AnnotateActionProvider.kinds }),
    ...(() => { const f = new FindingDiagnostics(store); return [f, vscode.languages.registerCodeActionsProvider(SOURCE_LANGUAGES, f, { providedCodeActionKinds: FindingDiagnostics.kinds })]; })(),
    new HeatDecorations(insights),
    vscode.window.registerTreeDataProvider('nsysAi.profiles', new ProfilesTreeProvider(store)),
    createStatusBar(store),
    ...registerCommands(store, editor, insights),
    registerOpenSuggestion(),
    ...registerRuns(server),
    ...registerAgents(store),
    ...registerMultiViews(ctx, store),
  );
}

export function deactivate(): void {}
