/* "Annotate with NVTX": a code action in Python files that asks
 * source/annotate for edits and applies them as one WorkspaceEdit (one undo). */
import * as vscode from 'vscode';
import type { AnnotateParams, TextEdit } from '../protocol/types';
import type { ServerManager } from './serverManager';
import { enclosingFunction as pyEnclosingFunction } from '../client/pyScope';

export class AnnotateActionProvider implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.RefactorRewrite];

  provideCodeActions(doc: vscode.TextDocument, range: vscode.Range | vscode.Selection): vscode.CodeAction[] {
    if (!vscode.workspace.getWorkspaceFolder(doc.uri)) return [];
    /* scope lines are 0-based and inclusive; a selection ending at column 0 stops on the line before */
    const endLine = range.end.character === 0 && range.end.line > range.start.line ? range.end.line - 1 : range.end.line;
    const scope: AnnotateParams['scope'] = !range.isEmpty
      ? { startLine: range.start.line, endLine }
      : enclosingFunction(doc, range.start.line) ?? 'file';
    const label = typeof scope === 'string' ? 'file' : 'function' in scope ? `function ${scope.function}` : 'selection';
    const make = (title: string, granularity: 'function' | 'statement') => {
      const action = new vscode.CodeAction(title, vscode.CodeActionKind.RefactorRewrite);
      action.command = { command: 'nsys-ai.annotate', title, arguments: [doc.uri, scope, granularity] };
      return action;
    };
    const remove = new vscode.CodeAction('Remove nsys-ai NVTX annotations (file)', vscode.CodeActionKind.RefactorRewrite);
    remove.command = { command: 'nsys-ai.unannotate', title: remove.title, arguments: [doc.uri] };
    return [make(`Annotate with NVTX (${label})`, 'function'), make(`Annotate with NVTX, each statement (${label})`, 'statement'), remove];
  }
}

function enclosingFunction(doc: vscode.TextDocument, line: number): { function: string } | undefined {
  const name = pyEnclosingFunction((i) => doc.lineAt(i).text, line);
  return name ? { function: name } : undefined;
}

function toWorkspaceEdit(uri: vscode.Uri, edits: TextEdit[]): vscode.WorkspaceEdit {
  const we = new vscode.WorkspaceEdit();
  for (const e of edits) we.replace(uri, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
  return we;
}

/** Asks source/annotate and applies its edits as one WorkspaceEdit (one undo step). */
export async function runAnnotate(server: ServerManager, uri: vscode.Uri, scope: AnnotateParams['scope'], granularity: 'function' | 'statement' = 'function'): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) throw new Error('The file is not inside a workspace folder.');
  const client = await server.get();
  const { edits, added } = await client.annotate({ file: uri.fsPath, workspaceRoot: folder.uri.fsPath, scope, granularity, ...(doc.isDirty ? { text: doc.getText() } : {}) });
  if (!edits.length) { void vscode.window.showInformationMessage('nsys-ai: nothing to annotate (already annotated?).'); return; }
  await vscode.workspace.applyEdit(toWorkspaceEdit(uri, edits));
  void vscode.window.setStatusBarMessage(`nsys-ai: added ${added?.length ?? edits.length} NVTX range(s); profile again to see them`, 5000);
}

export async function runUnannotate(server: ServerManager, uri: vscode.Uri): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) throw new Error('The file is not inside a workspace folder.');
  const client = await server.get();
  const { edits } = await client.unannotate({ file: uri.fsPath, workspaceRoot: folder.uri.fsPath, ...(doc.isDirty ? { text: doc.getText() } : {}) });
  if (edits.length) await vscode.workspace.applyEdit(toWorkspaceEdit(uri, edits));
}
