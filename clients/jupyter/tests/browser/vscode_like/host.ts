// A notebook front end that is not JupyterLab: @jupyter-widgets/html-manager's HTMLManager
// (as in ipywidgets' "web3" embedding example, from which VS Code's widget renderer derives)
// connected to a real kernel with @jupyterlab/services; third-party widget code loaded as
// VS Code loads it, as an AMD module: anywidget's classic-notebook module
// (share/jupyter/nbextensions/anywidget/index.js) evaluated with a `define` for
// @jupyter-widgets/base. Runs CODE in a fresh kernel and renders every widget it displays.
//
// window.nsysHost(settings) -> Promise<void>; progress and errors on window.nsysHostLog.
import * as base from "@jupyter-widgets/base";
import { HTMLManager } from "@jupyter-widgets/html-manager";
import { KernelManager, ServerConnection } from "@jupyterlab/services";
import type { Kernel, KernelMessage } from "@jupyterlab/services";

const WIDGET_MIME = "application/vnd.jupyter.widget-view+json";
const log: string[] = [];
(window as unknown as { nsysHostLog: string[] }).nsysHostLog = log;
const say = (s: string) => {
  log.push(s);
  console.log(`[host] ${s}`);
};

/** Loads a widget module like requirejs would: an AMD `define([deps], factory)` file. */
async function amdModule(url: string): Promise<unknown> {
  const text = await (await fetch(url)).text();
  let exported: unknown;
  const define = (deps: string[] | (() => unknown), factory?: (...mods: unknown[]) => unknown) => {
    if (typeof deps === "function") {
      exported = deps();
      return;
    }
    const mods = deps.map((d) => {
      if (d === "@jupyter-widgets/base") return base;
      throw new Error(`${url}: unknown AMD dependency ${d}`);
    });
    exported = factory?.(...mods);
  };
  (define as unknown as { amd: boolean }).amd = true;
  new Function("define", text)(define);
  return exported;
}

class KernelHTMLManager extends HTMLManager {
  constructor(private kernel: Kernel.IKernelConnection, loader: (name: string, version: string) => Promise<unknown>) {
    super({ loader });
    kernel.registerCommTarget(this.comm_target_name, async (comm, msg) => {
      await this.handle_comm_open(new base.shims.services.Comm(comm), msg);
    });
  }

  async _create_comm(target: string, modelId?: string, data?: unknown, metadata?: unknown,
                     buffers?: ArrayBuffer[] | ArrayBufferView[]): Promise<base.IClassicComm> {
    const comm = this.kernel.createComm(target, modelId);
    if (data || metadata) comm.open(data as never, metadata as never, buffers);
    return new base.shims.services.Comm(comm);
  }

  async _get_comm_info(): Promise<Record<string, unknown>> {
    const reply = await this.kernel.requestCommInfo({ target_name: this.comm_target_name });
    return reply.content.status === "ok" ? (reply.content.comms as Record<string, unknown>) : {};
  }
}

interface Settings {
  token: string;
  code: string;
  anywidgetUrl: string;
}

(window as unknown as { nsysHost: (s: Settings) => Promise<void> }).nsysHost = async (s: Settings) => {
  const settings = ServerConnection.makeSettings({ baseUrl: `${location.origin}/`,
    wsUrl: `ws://${location.host}/`, token: s.token });
  const kernel = await new KernelManager({ serverSettings: settings }).startNew({ name: "python3" });
  say(`kernel ${kernel.id} started`);
  const modules = new Map<string, Promise<unknown>>(); // one instance per module, like requirejs
  const loader = (name: string, version: string): Promise<unknown> => {
    let m = modules.get(name);
    if (!m) {
      say(`load widget module ${name}@${version}`);
      m = name === "anywidget" ? amdModule(s.anywidgetUrl) : Promise.reject(new Error(`widget module ${name} not available offline`));
      modules.set(name, m);
    }
    return m;
  };
  const manager = new KernelHTMLManager(kernel, loader);
  const out = document.getElementById("out") as HTMLElement;
  const shown: Promise<void>[] = [];
  const future = kernel.requestExecute({ code: s.code });
  future.onIOPub = (msg: KernelMessage.IIOPubMessage) => {
    const t = msg.header.msg_type;
    if (t === "display_data" || t === "execute_result") {
      const data = (msg.content as { data: Record<string, unknown> }).data;
      const ref = data[WIDGET_MIME] as { model_id: string } | undefined;
      if (!ref) return;
      shown.push((async () => {
        const model = await manager.get_model(ref.model_id);
        const view = await manager.create_view(model);
        const el = document.createElement("div");
        el.className = "widget-host";
        out.append(el);
        await manager.display_view(view, el);
        say(`widget ${ref.model_id} (${model.get("_model_name")}) displayed`);
      })().catch((e) => say(`display failed: ${e}`)));
    } else if (t === "error") {
      const c = msg.content as { ename: string; evalue: string };
      say(`kernel error: ${c.ename}: ${c.evalue}`);
    }
  };
  const reply = await future.done;
  say(`execute ${reply?.content.status}`);
  await Promise.all(shown);
};
