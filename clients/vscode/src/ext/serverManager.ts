/* One NsysClient for the window: binary from settings, PATH or the VSIX, server log in
 * an output channel, and a message when the server crashes or is given up on. */
import * as vscode from 'vscode';
import { NsysClient } from '../client/nsysClient';
import { resolveServerPath } from '../client/serverPath';
import { bundledServerPath } from '../client/bundledServer';
import type { Logger } from '../client/logger';

export class ServerManager implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel('nsys-ai', { log: true });
  private client: NsysClient | undefined;
  readonly logger: Logger = {
    info: (m) => this.output.info(m),
    warn: (m) => this.output.warn(m),
    error: (m) => this.output.error(m),
  };

  /** The started client, or throws with a message the user can act on. */
  async get(): Promise<NsysClient> {
    if (this.client) { await this.client.start(); return this.client; }
    const cfg = vscode.workspace.getConfiguration('nsys-ai');
    const bundled = bundledServerPath(vscode.extensions.getExtension('nsys-ai.nsys-ai')?.extensionPath);
    const where = resolveServerPath(cfg.get<string>('serverPath'), undefined, bundled);
    if (!where.ok) throw new Error(where.message);
    const client = new NsysClient({ command: where.path, logger: this.logger, maxRestarts: cfg.get<number>('maxRestarts', 3) });
    client.server.onEvent((e) => {
      if (e.type !== 'crashed') return;
      if (e.willRestart) void vscode.window.showWarningMessage(`nsys-ai server stopped unexpectedly (${e.signal ?? `exit ${e.code}`}); restarted it (${e.restarts}/${cfg.get<number>('maxRestarts', 3)}).`);
      else {
        void vscode.window.showErrorMessage('nsys-ai server keeps crashing; it will not be restarted. See the nsys-ai output.', 'Show Output').then((c) => c && this.output.show());
        this.client = undefined;
      }
    });
    this.client = client;
    await client.start();
    return client;
  }

  dispose(): void {
    void this.client?.dispose();
    this.output.dispose();
  }
}
