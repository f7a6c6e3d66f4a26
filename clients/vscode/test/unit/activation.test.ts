/* Activation smoke test: dist/extension.js runs against a recording stand-in
 * for the `vscode` module; every command, view and custom editor that
 * package.json contributes is registered, and nothing starts the server yet. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Module from 'node:module';
import { CLIENT_ROOT } from '../helpers';

function fakeVscode(log: Record<string, string[]>) {
  const push = (k: string, v: string) => (log[k] ??= []).push(v);
  const disposable = { dispose() {} };
  const emitter = class { event = () => disposable; fire() {} dispose() {} };
  const anyProxy: unknown = new Proxy(function () {}, { get: (_t, p) => (p === 'then' ? undefined : anyProxy), apply: () => anyProxy, construct: () => anyProxy as object });
  return {
    EventEmitter: emitter,
    Disposable: class { static from() { return disposable; } dispose() {} },
    Uri: { parse: (s: string) => ({ toString: () => s }), joinPath: () => ({}) },
    ThemeIcon: class {}, TreeItem: class {}, MarkdownString: class {}, Hover: class {}, CodeLens: class {}, Range: class {},
    CodeAction: class {}, WorkspaceEdit: class {}, TabInputText: class {}, TabInputCustom: class {},
    CodeActionKind: { RefactorRewrite: 'refactor.rewrite', QuickFix: 'quickfix' },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    StatusBarAlignment: { Left: 1 }, OverviewRulerLane: { Left: 1 }, ProgressLocation: { Notification: 15 },
    window: {
      createOutputChannel: (name: string) => { push('output', name); return { info() {}, warn() {}, error() {}, show() {}, dispose() {} }; },
      registerCustomEditorProvider: (id: string) => { push('customEditors', id); return disposable; },
      registerTreeDataProvider: (id: string) => { push('views', id); return disposable; },
      createStatusBarItem: () => ({ show() {}, hide() {}, dispose() {} }),
      createTextEditorDecorationType: () => { push('decorations', 'type'); return disposable; },
      onDidChangeVisibleTextEditors: () => disposable,
      visibleTextEditors: [],
      tabGroups: { all: [], onDidChangeTabs: () => { push('tabWatch', 'x'); return disposable; } },
    },
    languages: {
      registerHoverProvider: () => { push('hover', 'x'); return disposable; },
      registerCodeLensProvider: () => { push('codeLens', 'x'); return disposable; },
      registerCodeActionsProvider: () => { push('codeActions', 'x'); return disposable; },
      createDiagnosticCollection: (name: string) => { push('diagnostics', name); return { clear() {}, set() {}, dispose() {} }; },
    },
    commands: { registerCommand: (id: string) => { push('commands', id); return disposable; }, executeCommand: () => Promise.resolve() },
    workspace: { getConfiguration: () => ({ get: (_k: string, d: unknown) => d }), getWorkspaceFolder: () => undefined },
    other: anyProxy,
  };
}

test('activate registers exactly what package.json contributes, and starts no server', () => {
  const bundle = path.join(CLIENT_ROOT, 'dist', 'extension.js');
  assert.ok(fs.existsSync(bundle), 'build first: node scripts/build.mjs');
  const log: Record<string, string[]> = {};
  const vscode = fakeVscode(log);
  const M = Module as unknown as { _load: (req: string, ...rest: unknown[]) => unknown };
  const orig = M._load;
  const spawned: string[] = [];
  M._load = (req: string, ...rest: unknown[]) => {
    if (req === 'vscode') return vscode;
    const mod = orig(req, ...rest);
    if (req === 'child_process' || req === 'node:child_process') {
      const cp = mod as typeof import('node:child_process');
      return { ...cp, spawn: (cmd: string, ...a: unknown[]) => { spawned.push(cmd); return (cp.spawn as (...x: unknown[]) => unknown)(cmd, ...a); } };
    }
    return mod;
  };
  try {
    delete require.cache[bundle];
    const ext = require(bundle) as { activate: (ctx: unknown) => void };
    const subscriptions: unknown[] = [];
    ext.activate({ subscriptions, extensionUri: {} });
    const pkg = JSON.parse(fs.readFileSync(path.join(CLIENT_ROOT, 'package.json'), 'utf8'));
    const c = pkg.contributes;
    assert.deepEqual([...log.commands!].sort(), c.commands.map((x: { command: string }) => x.command).sort());
    assert.deepEqual([...log.customEditors!].sort(), c.customEditors.map((x: { viewType: string }) => x.viewType).sort());
    assert.deepEqual(log.views, c.views.nsysAi.map((x: { id: string }) => x.id));
    assert.equal(log.hover?.length, 1);
    assert.equal(log.codeLens?.length, 1, 'one CodeLens provider');
    assert.equal(log.codeActions?.length, 2, 'Annotate with NVTX, and a finding\'s Show in timeline');
    assert.deepEqual(log.diagnostics, ['nsys-ai findings'], 'report findings in Problems');
    assert.deepEqual(log.output, ['nsys-ai']);
    assert.equal(log.tabWatch?.length, 1, 'one watch for exports opened in other editors');
    /* the Open Profile command is offered where it is documented: the Explorer's context menu and the welcome view */
    assert.ok(c.menus['explorer/context'].some((m: { command: string }) => m.command === 'nsys-ai.openProfile'));
    assert.match(c.viewsWelcome.find((w: { view: string }) => w.view === 'nsysAi.profiles').contents, /\(command:nsys-ai\.openProfile\)/);
    assert.ok(subscriptions.length >= 10, 'everything is disposed with the extension');
    for (const e of c.customEditors) assert.equal(e.priority, 'option', `${e.viewType} does not take over other files`);
    assert.deepEqual(spawned, [], 'the server starts on first use, not on activation');
  } finally {
    M._load = orig;
  }
});
