/* The "Profiles" tree: each open profile → GPUs → streams, and the aggregate NVTX
 * tree (equal name paths merged), each level one nvtx/tree request with `parent`. */
import * as vscode from 'vscode';
import { formatNs } from '../client/format';
import { distinguishingDirs } from '../client/pathLabels';
import type { ProfileStore, OpenProfile } from './profileStore';

type Node =
  | { kind: 'profile'; p: OpenProfile }
  | { kind: 'gpus'; p: OpenProfile }
  | { kind: 'gpu'; p: OpenProfile; device: number }
  | { kind: 'stream'; p: OpenProfile; label: string; description: string }
  | { kind: 'nvtx'; p: OpenProfile }
  | { kind: 'range'; p: OpenProfile; id: number; childCount: number; label: string; description: string; start: number; end: number }
  | { kind: 'message'; label: string };

export class ProfilesTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly store: ProfileStore) {
    store.onDidChange(() => this.changed.fire());
  }

  getTreeItem(n: Node): vscode.TreeItem {
    const C = vscode.TreeItemCollapsibleState;
    switch (n.kind) {
      case 'profile': {
        const it = new vscode.TreeItem(n.p.title, C.Expanded);
        const all = this.store.all;
        const dir = distinguishingDirs(all.map((p) => p.uri.path))[all.indexOf(n.p)] ?? '';
        it.description = [dir, n.p === this.store.active ? 'active' : ''].filter((s) => s).join(' · ') || undefined;
        it.tooltip = n.p.uri.fsPath;
        it.iconPath = new vscode.ThemeIcon('pulse');
        it.command = { command: 'vscode.openWith', title: 'Open', arguments: [n.p.uri, 'nsysAi.profile'] };
        return it;
      }
      case 'gpus': return Object.assign(new vscode.TreeItem('GPUs', C.Expanded), { iconPath: new vscode.ThemeIcon('chip') });
      case 'gpu': return new vscode.TreeItem(`GPU ${n.device}`, C.Collapsed);
      case 'stream': return Object.assign(new vscode.TreeItem(n.label, C.None), { description: n.description });
      case 'nvtx': return Object.assign(new vscode.TreeItem('NVTX', C.Collapsed), { iconPath: new vscode.ThemeIcon('symbol-namespace') });
      case 'range': {
        const it = new vscode.TreeItem(n.label, n.childCount > 0 ? C.Collapsed : C.None);
        it.description = n.description;
        it.command = { command: 'nsys-ai.showInTimeline', title: 'Show in timeline', arguments: [{ profileId: n.p.profileId, start: n.start, end: n.end }] };
        return it;
      }
      case 'message': return new vscode.TreeItem(n.label, C.None);
    }
  }

  async getChildren(n?: Node): Promise<Node[]> {
    if (!n) {
      const all = this.store.all;
      return all.length ? all.map((p) => ({ kind: 'profile', p })) : [{ kind: 'message', label: 'No profile open. Use "nsys-ai: Open Profile".' }];
    }
    try {
      switch (n.kind) {
        case 'profile': return [{ kind: 'gpus', p: n.p }, { kind: 'nvtx', p: n.p }];
        case 'gpus': {
          const devices = [...new Set((await this.store.tracks(n.p)).filter((t) => t.device !== undefined && t.stream !== undefined).map((t) => t.device!))].sort((a, b) => a - b);
          return devices.map((device) => ({ kind: 'gpu', p: n.p, device }));
        }
        case 'gpu':
          return (await this.store.tracks(n.p))
            .filter((t) => t.device === n.device && t.stream !== undefined && !/nvtx/i.test(t.kind))
            .map((t) => ({ kind: 'stream', p: n.p, label: `stream ${t.stream}`, description: String(t.streamClass ?? t.kind) }));
        case 'nvtx':
        case 'range': {
          const client = await this.store.server.get();
          const r = await client.nvtxTree(n.p.profileId, { mode: 'aggregate', limit: 200, topKernels: 0, ...(n.kind === 'range' ? { parent: n.id } : {}) });
          if (!r.nodes.length) return [{ kind: 'message', label: 'no NVTX ranges' }];
          const out: Node[] = r.nodes.map((x) => ({ kind: 'range', p: n.p, id: x.id, childCount: x.childCount, label: x.name,
            description: `${formatNs(x.kernelNs)} GPU · ${x.opCount} ops`, start: x.gpuStart ?? x.start, end: x.gpuEnd ?? x.end }));
          if (r.total > r.nodes.length) out.push({ kind: 'message', label: `${r.total - r.nodes.length} more not shown` });
          return out;
        }
        default: return [];
      }
    } catch (e) {
      return [{ kind: 'message', label: `unavailable: ${(e as Error).message}` }];
    }
  }
}
