/* The open profiles of the window and which one is active. Opening shows
 * indexing progress through window.withProgress, driven by $/progress, and
 * the user can cancel it. */
import * as vscode from 'vscode';
import * as path from 'node:path';
import type { ProfileInfo, Track } from '../protocol/types';
import type { ServerManager } from './serverManager';
import { FirstFrameGate } from '../client/firstFrameGate';

export interface OpenProfile { uri: vscode.Uri; profileId: string; info: ProfileInfo; title: string; tracks?: Track[] }

export class ProfileStore implements vscode.Disposable {
  private byUri = new Map<string, OpenProfile>();
  private activeKey: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  /** Which open profiles' timelines have drawn (work that can wait waits for it). */
  readonly firstFrames = new FirstFrameGate();

  constructor(readonly server: ServerManager) {
    void server; /* reopen remapping is wired on first open */
  }

  get all(): OpenProfile[] { return [...this.byUri.values()]; }
  get active(): OpenProfile | undefined { return this.activeKey ? this.byUri.get(this.activeKey) : this.all[this.all.length - 1]; }
  byId(profileId: string): OpenProfile | undefined { return this.all.find((p) => p.profileId === profileId); }
  get(uri: vscode.Uri): OpenProfile | undefined { return this.byUri.get(uri.toString()); }

  setActive(uri: vscode.Uri): void { this.activeKey = uri.toString(); this.changed.fire(); }

  async open(uri: vscode.Uri): Promise<OpenProfile> {
    const hit = this.byUri.get(uri.toString());
    if (hit) return hit;
    const t0 = Date.now();
    const client = await this.server.get();
    const title = path.basename(uri.fsPath);
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `nsys-ai: opening ${title}`, cancellable: true },
      async (progress, token) => {
        let last = 0;
        return client.openProfile(uri.fsPath, {
          token,
          onProgress: (p) => {
            if (p.kind === 'end') return;
            const pct = p.percentage ?? last;
            progress.report({ message: p.message, increment: Math.max(0, pct - last) });
            last = pct;
          },
        });
      });
    /* epoch ms on both ends: the code-server bench lines this up with the webview's clock */
    this.server.logger.info(`opened ${title} in ${Date.now() - t0} ms (server + profile/open: ${t0} → ${Date.now()})`);
    const entry: OpenProfile = { uri, profileId: res.profileId, info: res.info, title };
    this.byUri.set(uri.toString(), entry);
    this.activeKey = uri.toString();
    client.onProfilesReopened((ids) => {
      const next = ids.get(entry.profileId);
      if (next) { entry.profileId = next; this.changed.fire(); }
    });
    this.changed.fire();
    return entry;
  }

  async tracks(p: OpenProfile): Promise<Track[]> {
    if (!p.tracks) p.tracks = (await (await this.server.get()).tracks(p.profileId)).tracks;
    return p.tracks;
  }

  async close(uri: vscode.Uri): Promise<void> {
    const p = this.byUri.get(uri.toString());
    if (!p) return;
    this.byUri.delete(uri.toString());
    this.firstFrames.forget(uri.toString());
    if (this.activeKey === uri.toString()) this.activeKey = undefined;
    this.changed.fire();
    try { await (await this.server.get()).closeProfile(p.profileId); } catch { /* server may be gone */ }
  }

  dispose(): void { this.changed.dispose(); }
}
