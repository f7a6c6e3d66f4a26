/* Gutter heat: a coloured bar beside mapped lines, hotter for more GPU time. */
import * as vscode from 'vscode';
import type { SourceInsights } from './sourceInsights';

const LEVELS = ['#2b6cb0', '#2f855a', '#b7791f', '#c05621', '#c53030'];

function bar(color: string): vscode.Uri {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="6" height="16"><rect x="1" y="0" width="4" height="16" fill="${color}"/></svg>`;
  return vscode.Uri.parse(`data:image/svg+xml;utf8,${encodeURIComponent(svg)}`);
}

export class HeatDecorations implements vscode.Disposable {
  private types = LEVELS.map((c) => vscode.window.createTextEditorDecorationType({ gutterIconPath: bar(c), gutterIconSize: 'contain', overviewRulerColor: c, overviewRulerLane: vscode.OverviewRulerLane.Left }));
  private subs: vscode.Disposable[];

  constructor(private readonly insights: SourceInsights) {
    this.subs = [
      vscode.window.onDidChangeVisibleTextEditors(() => void this.updateAll()),
      insights.onDidChange(() => void this.updateAll()),
    ];
  }

  async updateAll(): Promise<void> {
    for (const ed of vscode.window.visibleTextEditors) await this.update(ed);
  }

  private async update(ed: vscode.TextEditor): Promise<void> {
    const on = vscode.workspace.getConfiguration('nsys-ai').get<boolean>('heat', true);
    const hit = on ? await this.insights.forDocument(ed.document.uri) : undefined;
    const buckets: vscode.DecorationOptions[][] = LEVELS.map(() => []);
    if (hit) for (const l of hit.index.lines(ed.document.uri.fsPath)) {
      if (l.line < 1 || l.line > ed.document.lineCount) continue;
      buckets[hit.index.heat(l, LEVELS.length)]!.push({ range: new vscode.Range(l.line - 1, 0, l.line - 1, 0), hoverMessage: `${l.pctGpu.toFixed(1)}% of GPU kernel time` });
    }
    this.types.forEach((t, i) => ed.setDecorations(t, buckets[i]!));
  }

  dispose(): void { this.subs.forEach((s) => s.dispose()); this.types.forEach((t) => t.dispose()); }
}
