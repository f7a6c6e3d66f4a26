/* Wires a profile's WebviewPanel to the shared bridge logic (client/bridgeCore). */
import * as vscode from 'vscode';
import { createBridge } from '../client/bridgeCore';
import { toEnvelope, type Envelope, type HostToWebview } from '../protocol/messages';
import type { ProfileStore, OpenProfile } from './profileStore';
import type { FirstView } from '../client/firstTiles';

/** The timeline size the last profile page reported: the next page's first tiles are asked for it while it loads. */
let lastView: FirstView | undefined;

export function connectWebview(panel: vscode.WebviewPanel, profile: OpenProfile, store: ProfileStore, takePending: () => HostToWebview | undefined, held: readonly unknown[] = []): vscode.Disposable {
  const post = (e: Envelope) => void panel.webview.postMessage(e);
  const bridge = createBridge({ client: () => store.server.get(), profile: () => profile, post, logger: store.server.logger, takePending,
    onFirstFrame: () => store.firstFrames.drawn(profile.uri.toString()),
    firstView: { get: () => lastView, set: (v) => { lastView = v; } } });
  /* what the page sent while the profile was opening, before anything newer */
  for (const m of held) void bridge.handle(m);
  const sub = panel.webview.onDidReceiveMessage((m: unknown) => bridge.handle(m));
  let lastId = profile.profileId;
  const reopen = store.onDidChange(() => {
    if (profile.profileId !== lastId) { lastId = profile.profileId; post(toEnvelope({ type: 'profileReopened', profileId: profile.profileId })); }
  });
  return vscode.Disposable.from(sub, reopen);
}
