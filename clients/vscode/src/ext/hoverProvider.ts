/* Hover in Python, CUDA and C++: the kernels a line launches (or a kernel
 * definition, anywhere in its span), their time and share, every candidate
 * location of a kernel whose definition is not certain (with the evidence),
 * the top kernel's explanation, and "Show in timeline". */
import * as vscode from 'vscode';
import { hoverMarkdown } from '../client/hoverText';
import type { LocateCandidate } from '../protocol/types';
import type { ProfileStore } from './profileStore';

export class KernelHoverProvider implements vscode.HoverProvider {
  constructor(private readonly store: ProfileStore) {}

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    const profile = this.store.active;
    if (!profile) return undefined;
    const client = await this.store.server.get();
    const root = vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath;
    try {
      const at = await client.kernelsAt(profile.profileId, doc.uri.fsPath, pos.line + 1, root, token);
      if (!at.kernels?.length || token.isCancellationRequested) return undefined;
      const top = at.kernels[0]!;
      const explain = top.kernelId !== undefined
        ? await client.explain(profile.profileId, { kernelId: top.kernelId }).catch(() => undefined)
        : undefined;
      // every candidate of a kernel whose definition is not certain
      const alternatives: Record<string, LocateCandidate[]> = {};
      for (const k of at.kernels.filter((r) => (r.candidates ?? 1) > 1).slice(0, 3)) {
        const loc = await client.locate(profile.profileId, k.name, root, token).catch(() => undefined);
        if (loc) alternatives[k.name] = loc.candidates;
      }
      const md = new vscode.MarkdownString(hoverMarkdown(profile.title, profile.profileId, at, explain, alternatives));
      md.isTrusted = { enabledCommands: ['nsys-ai.showInTimeline'] };
      md.supportThemeIcons = true;
      return new vscode.Hover(md, doc.lineAt(pos.line).range);
    } catch {
      return undefined;
    }
  }
}
