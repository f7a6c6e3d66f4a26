/* Hover in Python, CUDA and C++: the kernels a line launches (or a kernel
 * definition), their time and share, an explanation, and "Show in timeline". */
import * as vscode from 'vscode';
import { formatNs, formatPct } from '../client/format';
import type { ProfileStore } from './profileStore';

export class KernelHoverProvider implements vscode.HoverProvider {
  constructor(private readonly store: ProfileStore) {}

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    const profile = this.store.active;
    if (!profile) return undefined;
    const client = await this.store.server.get();
    if (!client.supports('source/kernelsAt')) return undefined;
    let res;
    try {
      res = await client.kernelsAt(profile.profileId, doc.uri.fsPath, pos.line + 1, token);
    } catch {
      return undefined;
    }
    const kernels = res.kernels ?? [];
    if (!kernels.length) return undefined;
    const md = new vscode.MarkdownString(undefined, true);
    md.isTrusted = { enabledCommands: ['nsys-ai.showInTimeline'] };
    md.appendMarkdown(`**nsys-ai** · ${profile.title}\n\n`);
    md.appendMarkdown('| kernel | count | time | GPU |\n|---|---:|---:|---:|\n');
    for (const k of kernels.slice(0, 8)) {
      const name = String(k.displayName ?? k.name).replace(/\|/g, '\\|');
      md.appendMarkdown(`| \`${name.length > 60 ? name.slice(0, 59) + '…' : name}\` | ${k.count ?? ''} | ${k.totalNs !== undefined ? formatNs(k.totalNs) : ''} | ${k.pctOfGpu !== undefined ? formatPct(k.pctOfGpu) : ''} |\n`);
    }
    const top = kernels[0]!;
    const why = top.explanation ?? top.summary;
    if (why) md.appendMarkdown(`\n${String(why)}\n`);
    const args = encodeURIComponent(JSON.stringify([{ profileId: profile.profileId, kernelId: top.kernelId ?? top.exampleKernelId, name: top.name }]));
    md.appendMarkdown(`\n[Show in timeline](command:nsys-ai.showInTimeline?${args})`);
    return new vscode.Hover(md, doc.getWordRangeAtPosition(pos));
  }
}
