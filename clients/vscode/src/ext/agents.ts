/* Agents in VS Code: the MCP server definition provider (agent mode gets
 * `nsys-ai mcp` with the window's open profiles) and the command "Ask about
 * this profile" (agent/ask: the LLM's tool loop when an endpoint is
 * configured, else the evidence answer). The MCP API (VS Code 1.101) is
 * feature-detected: older hosts just lack the provider. */
import * as vscode from 'vscode';
import { askMarkdown, mcpServerArgs } from '../client/agentAsk';
import { resolveServerPath } from '../client/serverPath';
import type { ProfileStore } from './profileStore';

export const MCP_PROVIDER_ID = 'nsys-ai.mcpServers';

interface McpProvider {
  onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[];
}
type McpLm = { registerMcpServerDefinitionProvider?: (id: string, p: McpProvider) => vscode.Disposable };
type McpStdio = new (label: string, command: string, args?: string[], env?: Record<string, string>, version?: string) => unknown;

function registerMcp(store: ProfileStore): vscode.Disposable[] {
  const api = vscode as unknown as { lm?: McpLm; McpStdioServerDefinition?: McpStdio };
  const register = api.lm?.registerMcpServerDefinitionProvider;
  const Stdio = api.McpStdioServerDefinition;
  if (!register || !Stdio) return [];
  const changed = new vscode.EventEmitter<void>();
  const provider: McpProvider = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => {
      const where = resolveServerPath(vscode.workspace.getConfiguration('nsys-ai').get<string>('serverPath'));
      if (!where.ok) return [];
      return [new Stdio('nsys-ai', where.path, mcpServerArgs(store.all.map((p) => p.uri.fsPath)))];
    },
  };
  return [changed, store.onDidChange(() => changed.fire()), register.call(api.lm, MCP_PROVIDER_ID, provider)];
}

async function ask(store: ProfileStore): Promise<void> {
  const p = store.active;
  if (!p) {
    void vscode.window.showInformationMessage('nsys-ai: open a profile first.');
    return;
  }
  const question = await vscode.window.showInputBox({ prompt: `Ask about ${p.title}`, placeHolder: 'Why is the GPU idle?' });
  if (!question) return;
  const client = await store.server.get();
  const cfg = await client.request('agent/configure', {});
  if (!cfg.configured) {
    const pick = await vscode.window.showInformationMessage(
      'nsys-ai: no LLM endpoint is configured (NSYS_AI_LLM_BASE_URL and NSYS_AI_LLM_MODEL, or ~/.config/nsys-ai/config.json; docs/agents.md). Answer from the profile\'s evidence alone?',
      'Evidence answer');
    if (!pick) return;
  }
  const r = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'nsys-ai: asking', cancellable: true },
    (progress, token) => client.requestWithProgress('agent/ask', { profileId: p.profileId, question }, {
      token, onProgress: (e) => { if (e.kind !== 'end' && e.message) progress.report({ message: e.message }); },
    }));
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: askMarkdown(r) });
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function registerAgents(store: ProfileStore): vscode.Disposable[] {
  return [
    ...registerMcp(store),
    vscode.commands.registerCommand('nsys-ai.askAboutProfile', () =>
      ask(store).catch((e: unknown) => void vscode.window.showErrorMessage(`nsys-ai: ${e instanceof Error ? e.message : String(e)}`))),
  ];
}
