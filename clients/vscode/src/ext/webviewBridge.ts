/* Wires a profile's WebviewPanel to the shared bridge logic (client/bridgeCore). */
import * as vscode from 'vscode';
import { createBridge } from '../client/bridgeCore';
import type { HostToWebview } from '../protocol/messages';
import type { ProfileStore, OpenProfile } from './profileStore';

export function connectWebview(panel: vscode.WebviewPanel, profile: OpenProfile, store: ProfileStore, takePending: () => HostToWebview | undefined): vscode.Disposable {
  const post = (m: HostToWebview) => void panel.webview.postMessage(m);
  const bridge = createBridge({ client: () => store.server.get(), profile: () => profile, post, logger: store.server.logger, takePending });
  const sub = panel.webview.onDidReceiveMessage((m: unknown) => bridge.handle(m));
  let lastId = profile.profileId;
  const reopen = store.onDidChange(() => {
    if (profile.profileId !== lastId) { lastId = profile.profileId; post({ type: 'profileReopened', profileId: profile.profileId }); }
  });
  return vscode.Disposable.from(sub, reopen);
}
