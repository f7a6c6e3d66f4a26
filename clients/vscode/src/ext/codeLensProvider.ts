/* The one CodeLens provider: above each mapped line,
 * "12 kernels · 3.4 ms · 18% GPU", which reveals the line's kernels, and,
 * for each kernel whose definition has several candidates, one lens
 * "NAME: 1 of N candidate definitions · 77%" with the evidence as tooltip
 * (the hover lists every candidate). */
import * as vscode from 'vscode';
import { candidateLensTitle, lensTitle } from '../client/format';
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
      .flatMap((l) => {
        const range = new vscode.Range(l.line - 1, 0, l.line - 1, 0);
        return [new vscode.CodeLens(range, {
          title: lensTitle(l.count, l.totalNs, l.pctGpu),
          command: 'nsys-ai.showInTimeline',
          arguments: [{ profileId: hit.profile.profileId, file: doc.uri.fsPath, line: l.line }],
        }), ...l.ambiguous.map((k) => new vscode.CodeLens(range, {
          title: candidateLensTitle(k.name, k.candidates, k.confidence),
          tooltip: k.evidence,
          command: 'nsys-ai.showInTimeline',
          arguments: [{ profileId: hit.profile.profileId, name: k.name }],
        }))];
      });
  }
}
