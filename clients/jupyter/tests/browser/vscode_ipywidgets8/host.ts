// The widget rendered by VS Code's own ipywidgets 8 widget manager: the npm package
// @vscode/jupyter-ipywidgets8 (dist/ipywidgets.js), which the VS Code "Jupyter Notebook
// Renderers" extension loads into every Jupyter notebook webview as a notebook preload, next
// to require.js. This page plays the part of the rest of that webview:
//
//  - the preloads, as VS Code runs them: require.js as a global script (the page loads it
//    before this file), then `import()` of ipywidgets.js and a call of its `activate()`;
//  - vscode-jupyter's ipywidgetsKernel preload, once the kernel reports ipywidgets 8:
//    `vscIPyWidgets8.load()` (defines @jupyter-widgets/base, controls and output in
//    require.js), then `new vscIPyWidgets.WidgetManager(kernel, container, scriptLoader,
//    logger)` and, for each widget output, get_model / create_view / display_view as its
//    renderWidget does;
//  - the kernel: a @jupyterlab/services kernel connection to a Jupyter server over a real
//    WebSocket; VS Code passes one too (vscode-jupyter's proxy kernel), but its WebSocket is a
//    stand-in whose frames go by postMessage to the extension host, which relays them;
//  - the script loader: when the manager asks for a widget module's source, the answer VS
//    Code's extension host gives for a local kernel (the kernel environment's
//    share/jupyter/nbextensions, served under a base URL, the module mapped to its entry point
//    as that module's extension.js says), registered in require.js the way vscode-jupyter's
//    requirejsRegistry does (requirejs.config paths + the jupyter-js-widgets map). The module
//    itself is then loaded by the bundle's WidgetManager.loadClass through require.js.
//  - the webview's wheel forwarding: VS Code's notebook webview listens for wheel events on
//    window and sends each one that arrives not default-prevented (and that no scrollable
//    element inside the output would take) to the editor, which scrolls the notebook; the page
//    records every wheel event that reaches window on window.nsysWheels instead: whether the
//    output prevented it, whether an element inside would scroll, whether VS Code would
//    scroll the notebook with it.
//
// window.nsysVscHost(settings) -> Promise<void>; progress and errors on window.nsysHostLog.
import { KernelManager, ServerConnection } from "@jupyterlab/services";
import type { Kernel, KernelMessage } from "@jupyterlab/services";

const WIDGET_MIME = "application/vnd.jupyter.widget-view+json";
const log: string[] = [];
const say = (s: string) => {
  log.push(s);
  console.log(`[vsc-host] ${s}`);
};

interface Settings {
  token: string;
  code: string;
  preloadUrl: string; // @vscode/jupyter-ipywidgets8/dist/ipywidgets.js
  baseUrl: string; // where the kernel environment's share/jupyter (nbextensions/...) is served
  widgetEntryPoints: Record<string, string>; // module name -> "nbextensions/<dir>/<entry>" (no .js)
}

/** The constructor the bundle publishes on window.vscIPyWidgets (the types VS Code uses). */
interface ScriptLoader {
  readonly widgetsRegisteredInRequireJs: Readonly<Set<string>>;
  errorHandler(className: string, moduleName: string, moduleVersion: string, error: unknown): void;
  loadWidgetScript(moduleName: string, moduleVersion: string): Promise<void>;
  successHandler(className: string, moduleName: string, moduleVersion: string): void;
}
interface Model {
  get(key: string): unknown;
}
interface VscWidgetManager {
  get_model(id: string): Promise<Model> | undefined;
  create_view(model: Model, options: { el: HTMLElement }): Promise<unknown>;
  display_view(data: unknown, view: unknown, options: { node: HTMLElement }): Promise<unknown>;
}
type VscWidgetManagerCtor = new (kernel: Kernel.IKernelConnection, el: HTMLElement, loader: ScriptLoader,
  logger: (m: string) => void, widgetState?: unknown) => VscWidgetManager;
interface RequireJs {
  config(c: Record<string, unknown>): void;
}
type Win = typeof window & {
  requirejs?: RequireJs;
  vscIPyWidgets8?: { load(): void; unload(): void };
  vscIPyWidgets?: { WidgetManager: VscWidgetManagerCtor };
  nsysHostLog: string[];
  nsysHostErrors: string[];
  nsysVscHost: (s: Settings) => Promise<void>;
  nsysWheels: { prevented: boolean; scrollsInside: boolean; toEditor: boolean }[];
};
const win = window as Win;
win.nsysHostLog = log;
win.nsysHostErrors = [];
win.nsysWheels = [];

/** Whether some element between the wheel's target and the output container would scroll. */
function scrollsInside(ev: WheelEvent): boolean {
  for (let n = ev.target as Node | null; n instanceof Element && n.id !== "out"; n = n.parentNode) {
    if (ev.deltaY < 0 && n.scrollTop > 0) return true;
    if (ev.deltaY > 0 && n.scrollTop + n.clientHeight < n.scrollHeight) return true;
  }
  return false;
}
window.addEventListener("wheel", (ev: WheelEvent) => {
  const inside = scrollsInside(ev);
  win.nsysWheels.push({ prevented: ev.defaultPrevented, scrollsInside: inside, toEditor: !ev.defaultPrevented && !inside });
});

function scriptLoader(s: Settings): ScriptLoader {
  const registered = new Set<string>();
  const requirejs = win.requirejs;
  if (!requirejs) throw new Error("require.js is not on the page (VS Code's renderer preload provides it)");
  requirejs.config({ baseUrl: s.baseUrl, map: { "*": { "jupyter-js-widgets": "@jupyter-widgets/base" } } });
  document.body.dataset.baseUrl = s.baseUrl; // as vscode-jupyter's ScriptManager does
  return {
    widgetsRegisteredInRequireJs: registered,
    async loadWidgetScript(moduleName, moduleVersion) {
      const entry = s.widgetEntryPoints[moduleName];
      say(`script source requested for ${moduleName}@${moduleVersion}: ${entry ?? "(none)"}`);
      if (!entry) return; // VS Code then lets require.js try (and fail) as well
      requirejs.config({ paths: { [moduleName]: `${s.baseUrl}${entry}` } });
      registered.add(moduleName);
    },
    successHandler(className, moduleName, moduleVersion) {
      say(`widget class loaded: ${moduleName}@${moduleVersion} ${className}`);
    },
    errorHandler(className, moduleName, moduleVersion, error) {
      const m = `widget class failed to load: ${moduleName}@${moduleVersion} ${className}: ${error}`;
      say(m);
      win.nsysHostErrors.push(m);
    },
  };
}

/** Waits for the model the way vscode-jupyter's renderWidget does: the display message may
 * come before the manager has processed the comm_open that creates it. */
async function modelFor(manager: VscWidgetManager, id: string): Promise<Model> {
  for (let i = 0; ; i++) {
    const p = manager.get_model(id);
    if (p) {
      try {
        return await p;
      } catch (e) {
        if (i >= 100) throw e;
      }
    } else if (i >= 100) {
      throw new Error(`widget model ${id} never appeared`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

win.nsysVscHost = async (s: Settings) => {
  // 1. the preload, as VS Code's notebook webview runs a preload: import it, call activate()
  const preload = (await import(/* @vite-ignore */ s.preloadUrl)) as { activate?: (ctx: unknown) => void };
  if (typeof preload.activate !== "function") throw new Error(`${s.preloadUrl} exports no activate()`);
  preload.activate({});
  if (!win.vscIPyWidgets8) throw new Error("activate() did not publish window.vscIPyWidgets8");
  // 2. the kernel reports ipywidgets 8 (checked by the code below): load the version-8 widgets
  win.vscIPyWidgets8.load();
  const WidgetManager = win.vscIPyWidgets?.WidgetManager;
  if (!WidgetManager) throw new Error("vscIPyWidgets8.load() did not publish window.vscIPyWidgets.WidgetManager");
  say("@vscode/jupyter-ipywidgets8 loaded");

  const settings = ServerConnection.makeSettings({ baseUrl: `${location.origin}/`,
    wsUrl: `ws://${location.host}/`, token: s.token });
  const kernel = await new KernelManager({ serverSettings: settings }).startNew({ name: "python3" });
  say(`kernel ${kernel.id} started`);
  const container = document.getElementById("out") as HTMLElement;
  const manager = new WidgetManager(kernel, container, scriptLoader(s), (m) => say(`manager: ${m}`));

  const shown: Promise<void>[] = [];
  const future = kernel.requestExecute({ code: s.code });
  future.onIOPub = (msg: KernelMessage.IIOPubMessage) => {
    const t = msg.header.msg_type;
    if (t === "display_data" || t === "execute_result") {
      const data = (msg.content as { data: Record<string, unknown> }).data;
      const ref = data[WIDGET_MIME] as { model_id: string; version_major: number } | undefined;
      if (!ref) return;
      shown.push((async () => {
        if (ref.version_major !== 2) throw new Error(`widget data version ${ref.version_major}`);
        // the output element, as vscode-jupyter's renderIPyWidget builds it
        const ele = document.createElement("div");
        ele.className = "cell-output-ipywidget-background";
        const out = document.createElement("div");
        out.className = "cell-output cell-output";
        ele.append(out);
        container.append(ele);
        const model = await modelFor(manager, ref.model_id);
        const view = await manager.create_view(model, { el: ele });
        await manager.display_view(ref, view, { node: ele });
        say(`widget ${ref.model_id} (${String(model.get("_model_module"))} ${String(model.get("_model_name"))}) displayed`);
      })().catch((e) => {
        say(`display failed: ${e}`);
        win.nsysHostErrors.push(`display failed: ${e}`);
      }));
    } else if (t === "error") {
      const c = msg.content as { ename: string; evalue: string };
      say(`kernel error: ${c.ename}: ${c.evalue}`);
      win.nsysHostErrors.push(`kernel error: ${c.ename}: ${c.evalue}`);
    } else if (t === "stream") {
      say(`kernel output: ${(msg.content as { text: string }).text.trim()}`);
    }
  };
  const reply = await future.done;
  say(`execute ${reply?.content.status}`);
  await Promise.all(shown);
};
