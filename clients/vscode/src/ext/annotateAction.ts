/* "Annotate with NVTX": a code action in Python files that asks
 * source/annotate for edits and applies them as one WorkspaceEdit (one undo). */
import * as vscode from 'vscode';
import type { AnnotateParams } from '../protocol/types';
import type { ServerManager } from './serverManager';

export class AnnotateActionProvider implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.RefactorRewrite];

  provideCodeActions(doc: vscode.TextDocument, range: vscode.Range | vscode.Selection): vscode.CodeAction[] {
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    if (!folder) return [];
    const scope: AnnotateParams['scope'] = !range.isEmpty
      ? { startLine: range.start.line, endLine: range.end.line }
      : enclosingFunction(doc, range.start.line) ?? 'file';
    const label = typeof scope === 'string' ? 'file' : 'function' in scope ? `function ${scope.function}` : 'selection';
    const action = new vscode.CodeAction(`Annotate with NVTX (${label})`, vscode.CodeActionKind.RefactorRewrite);
    action.command = { command: 'nsys-ai.annotate', title: action.title, arguments: [doc.uri, scope] };
    return [action];
  }
}

/** The nearest enclosing `def NAME(` above `line` (Python indentation rules). */
export function enclosingFunction(doc: vscode.TextDocument, line: number): { function: string } | undefined {
  let minIndent = Infinity;
  for (let i = line; i >= 0; i--) {
    const text = doc.lineAt(i).text;
    if (!text.trim()) continue;
    const indent = text.length - text.trimStart().length;
    const m = /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/.exec(text);
    if (m && (i === line || indent < minIndent)) return { function: m[1]! };
    minIndent = Math.min(minIndent, indent);
  }
  return undefined;
}

export async function runAnnotate(server: ServerManager, uri: vscode.Uri, scope: AnnotateParams['scope']): Promise<void> {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) throw new Error('The file is not inside a workspace folder.');
  const client = await server.get();
  const { edits } = await client.annotate({ file: uri.fsPath, workspaceRoot: folder.uri.fsPath, scope, granularity: 'function' });
  if (!edits.length) { void vscode.window.showInformationMessage('nsys-ai: nothing to annotate (already annotated?).'); return; }
  const we = new vscode.WorkspaceEdit();
  for (const e of edits) we.replace(uri, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
  await vscode.workspace.applyEdit(we);
}
