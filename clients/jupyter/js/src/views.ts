// The notebook widget of the views over several profiles (anywidget ESM): the diff view
// and the multi-rank timeline. The views themselves are the VS Code webview's
// (clients/vscode/src/webview/diffView.ts, ranksView.ts, through viewRender.ts): the same
// code draws both clients ("nsys-views/..." is clients/vscode/src: build.mjs's alias, the
// sdist's js/vscode-src). Here they live in a shadow root (their styles stay inside it),
// with `init` (the view's data as exact JSON text, protocol/viewMessages' ViewInit) from
// Python, and their requests go to Python as `{id, kind: "rpc", method, params}` custom
// messages (params as exact JSON text), answered `{id, kind: "rpc", result}` (the server's
// JSON text) or `{id, kind: "rpc", error, code}`.
import type { AnyModel, RenderProps } from "./anywidget";
import { parseExact, stringifyExact } from "nsys-views/client/exactJson";
import { renderView } from "nsys-views/webview/viewRender";
import { setThemeRoot } from "nsys-views/webview/dom";
import type { ViewInit } from "nsys-views/protocol/viewMessages";
import baseCss from "nsys-views/webview/webview.css";
import viewsCss from "nsys-views/webview/views.css";

interface Model { init: string; height: number }
type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** The widget's requests as custom messages; answers matched by id. */
class WidgetRpc {
  private next = 1;
  private pending = new Map<number, Pending>();
  constructor(private readonly model: AnyModel<Model>) {
    model.on("msg:custom", (msg: unknown) => this.settle(msg as { id?: number; kind?: string; result?: string; error?: string }));
  }
  request<R>(method: string, params: Record<string, unknown>): Promise<R> {
    const id = this.next++;
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve: (v) => resolve(v as R), reject });
      this.model.send({ id, kind: "rpc", method, params: stringifyExact(params) });
    });
  }
  private settle(m: { id?: number; kind?: string; result?: string; error?: string }): void {
    if (m.kind !== "rpc" || m.id === undefined) return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (typeof m.result === "string") p.resolve(parseExact(m.result));
    else p.reject(new Error(m.error ?? "no answer"));
  }
  dispose(): void {
    for (const p of this.pending.values()) p.reject(new Error("the widget closed"));
    this.pending.clear();
  }
}

/* The views' colours are VS Code's theme variables (their fallbacks: VS Code's dark
 * palette, readable in any host). In JupyterLab / Notebook 7 (its --jp-* variables on
 * the page) they follow JupyterLab's theme, light or dark; in VS Code's notebooks the
 * page has VS Code's own variables; elsewhere the fallbacks. */
const JP_THEME: Array<[string, string]> = [
  ["editor-foreground", "ui-font-color1"], ["editor-background", "layout-color0"],
  ["descriptionForeground", "ui-font-color2"], ["editorWidget-border", "border-color2"],
  ["list-hoverBackground", "layout-color2"], ["list-activeSelectionBackground", "brand-color3"],
  ["editorHoverWidget-background", "layout-color1"], ["editorHoverWidget-foreground", "ui-font-color1"],
  ["editorHoverWidget-border", "border-color1"], ["errorForeground", "error-color1"],
  ["editorWarning-foreground", "warn-color1"], ["testing-iconPassed", "success-color1"],
  ["focusBorder", "brand-color1"], ["input-background", "layout-color1"], ["input-border", "border-color1"],
  ["sideBar-background", "layout-color1"], ["textCodeBlock-background", "cell-editor-background"],
  ["panelTitle-activeBorder", "brand-color1"], ["charts-blue", "brand-color1"],
  ["button-secondaryBackground", "layout-color2"], ["button-secondaryForeground", "ui-font-color1"],
  ["button-secondaryHoverBackground", "layout-color3"], ["button-border", "border-color1"],
  ["badge-background", "layout-color3"], ["badge-foreground", "ui-font-color1"],
  ["font-family", "ui-font-family"], ["font-size", "ui-font-size1"], ["editor-font-family", "code-font-family"],
];
const JP_CSS = `.nsys-views.jp { ${JP_THEME.map(([v, jp]) => `--vscode-${v}: var(--jp-${jp});`).join(" ")} }`;

/** JupyterLab's theme is on the page: its variables reach `el` (they cross the shadow root). */
export const hasJupyterTheme = (el: Element) => getComputedStyle(el).getPropertyValue("--jp-layout-color0").trim() !== "";

/* the views fill the widget's height (not the page's) */
const WIDGET_CSS = `:host { display: block; }
.nsys-views { color: var(--vscode-editor-foreground, #ccc); background: var(--vscode-editor-background, #1e1e1e);
  font-family: var(--vscode-font-family, system-ui, sans-serif); font-size: var(--vscode-font-size, 13px); }
${JP_CSS}
.nsys-views .view-diff, .nsys-views .view-ranks { height: var(--nsys-views-height); }
.nsys-views .view-diff .timeline { max-height: calc((var(--nsys-views-height) - 150px) / 2); }
.nsys-views .view-ranks .timeline { max-height: calc(var(--nsys-views-height) - 80px); }`;

function render({ model, el }: RenderProps<Model>): () => void {
  const shadow = el.attachShadow({ mode: "open" });
  const style = document.createElement("style");
  style.textContent = baseCss + viewsCss + WIDGET_CSS;
  const root = document.createElement("div");
  root.className = hasJupyterTheme(el) ? "nsys-views jp" : "nsys-views";
  root.style.setProperty("--nsys-views-height", `${model.get("height") || 640}px`);
  shadow.append(style, root);
  setThemeRoot(root); /* the timeline's canvas colours: the variables as the view sees them */
  const rpc = new WidgetRpc(model);
  renderView(root, rpc, parseExact(model.get("init")) as ViewInit);
  return () => rpc.dispose();
}

export default { render };
