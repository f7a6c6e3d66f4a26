/* source/map per (profile, workspace folder), cached, as SourceIndex; the
 * lens, heat and hover features read it. Refreshed when profiles change.
 * Asked once the profile's timeline has drawn its first frame (or after
 * SOURCE_WAIT_MS): a profile opened beside a visible source file would
 * otherwise map its kernels to the source while the first frame's tiles wait. */
import * as vscode from 'vscode';
import { SourceIndex } from '../client/sourceModel';
import type { ProfileStore, OpenProfile } from './profileStore';

const SOURCE_WAIT_MS = 5000;

export class SourceInsights implements vscode.Disposable {
  private cache = new Map<string, Promise<SourceIndex | undefined>>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private sub: vscode.Disposable;

  constructor(private readonly store: ProfileStore) {
    this.sub = store.onDidChange(() => this.refresh());
  }

  refresh(): void { this.cache.clear(); this.changed.fire(); }

  /** The index of the active profile for the workspace folder of `uri`. */
  async forDocument(uri: vscode.Uri): Promise<{ profile: OpenProfile; index: SourceIndex } | undefined> {
    const profile = this.store.active;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!profile || !folder) return undefined;
    const key = `${profile.profileId}|${folder.uri.fsPath}`;
    let p = this.cache.get(key);
    if (!p) {
      p = this.load(profile, folder.uri.fsPath);
      this.cache.set(key, p);
    }
    const index = await p;
    return index ? { profile, index } : undefined;
  }

  private async load(profile: OpenProfile, root: string): Promise<SourceIndex | undefined> {
    try {
      await this.store.firstFrames.wait(profile.uri.toString(), SOURCE_WAIT_MS);
      const client = await this.store.server.get();
      return new SourceIndex(await client.sourceMap(profile.profileId, root), root);
    } catch (e) {
      this.store.server.logger.warn(`source/map failed: ${(e as Error).message}`);
      return undefined;
    }
  }

  dispose(): void { this.sub.dispose(); this.changed.dispose(); }
}
