/* The one CodeLens provider: above each mapped line,
 * "12 kernels · 3.4 ms · 18% GPU", which reveals the line's kernels. */
import * as vscode from 'vscode';
import { lensTitle } from '../client/format';
import type { SourceInsights } from './sourceInsights';

export class KernelCodeLensProvider implements vscode.CodeLensProvider {
  readonly onDidChangeCodeLenses: vscode.Event<void>;

  constructor(private readonly insights: SourceInsights) {
    this.onDidChangeCodeLenses = insights.onDidChange;
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    if (!vscode.workspace.getConfiguration('nsys-ai').get<boolean>('codeLens', true)) return [];
    const hit = await this.insights.forDocument(doc.uri);
    if (!hit) return [];
    return hit.index.lines(doc.uri.fsPath)
      .filter((l) => l.line >= 1 && l.line <= doc.lineCount)
      .map((l) => new vscode.CodeLens(new vscode.Range(l.line - 1, 0, l.line - 1, 0), {
        title: lensTitle(l.count, l.totalNs, l.pctGpu),
        command: 'nsys-ai.showInTimeline',
        arguments: [{ profileId: hit.profile.profileId, file: doc.uri.fsPath, line: l.line }],
      }));
  }
}
