// The NVTX tree widget: rows loaded lazily from the Python side (pages of roots,
// a node's children on first expand), each with CPU time, projected GPU time,
// op count, kernel time and a bar of its share of the longest root shown.
import { AnyModel, RenderProps } from "./anywidget";
import { fmtDur } from "./format";

interface Key {
  path: number[];
  id?: number;
  pid?: number;
  tid?: number;
  depth?: number;
  start?: number;
  end?: number;
}

interface Node {
  name: string;
  domain?: string | null;
  start: number;
  end: number;
  gpuStart?: number | null;
  gpuEnd?: number | null;
  opCount?: number;
  kernelNs?: number;
  instances?: number;
  cpuNs?: number;
  childCount: number | null;
  key: Key;
}

interface Model {
  title: string;
  total: number;
  aggregated: boolean;
}

interface Reply {
  id: number;
  kind: string;
  error?: string;
  code?: number | null;
  nodes?: Node[];
  total?: number;
}

const PAGE = 200;

const CSS = `
.nsys-tree { font: 12px system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; max-height: 480px; overflow: auto; padding: 0 0 4px; }
.nsys-tree-head, .nsys-tree-row { display: grid; grid-template-columns: minmax(240px, 1fr) 90px 90px 70px 90px 120px; gap: 6px;
  padding: 1px 8px; align-items: center; white-space: nowrap; }
.nsys-tree-head { font-weight: 600; border-bottom: 1px solid var(--jp-border-color2, #ddd); position: sticky; top: 0;
  background: var(--jp-layout-color0, #fff); z-index: 1; }
.nsys-tree-row:hover { background: rgba(128,128,128,.12); }
.nsys-tree-name { overflow: hidden; text-overflow: ellipsis; cursor: default; }
.nsys-tree-toggle { display: inline-block; width: 14px; cursor: pointer; user-select: none; color: var(--jp-ui-font-color2, #666); }
.nsys-tree-num { text-align: right; font-variant-numeric: tabular-nums; }
.nsys-tree-bar { height: 8px; background: hsl(265, 50%, 55%); border-radius: 2px; }
.nsys-tree-more { padding: 2px 8px; color: var(--jp-content-link-color, #0969da); cursor: pointer; }
.nsys-tree-note { padding: 2px 8px; color: var(--jp-ui-font-color2, #666); }
.nsys-tree-err { padding: 2px 8px; color: #b00; }
`;

function div(cls: string, text?: string): HTMLDivElement {
  const d = document.createElement("div");
  d.className = cls;
  if (text !== undefined) d.textContent = text;
  return d;
}

class Requests {
  private pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private next = 1;

  constructor(private model: AnyModel<Model>) {
    model.on("msg:custom", (msg: unknown) => {
      const m = msg as Reply;
      const p = m && typeof m.id === "number" ? this.pending.get(m.id) : undefined;
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.code != null ? `[${m.code}] ${m.error}` : m.error));
      else p.resolve(m);
    });
  }

  ask(content: Record<string, unknown>): Promise<Reply> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.model.send({ id, ...content });
    });
  }

  dispose(): void {
    for (const p of this.pending.values()) p.reject(new Error("widget closed"));
    this.pending.clear();
  }
}

class Tree {
  private root = div("nsys-tree");
  private longest = 1;

  constructor(private req: Requests, model: AnyModel<Model>, host: HTMLElement) {
    const style = document.createElement("style");
    style.textContent = CSS;
    const head = div("nsys-tree-head");
    const title = model.get("title");
    const first = `${model.get("aggregated") ? "NVTX path (merged)" : "NVTX range"}${title ? ` · ${title}` : ""}`;
    for (const [h, cls] of [[first, ""], ["CPU", "nsys-tree-num"], ["GPU (proj.)", "nsys-tree-num"], ["ops", "nsys-tree-num"],
      ["kernels", "nsys-tree-num"], ["share", ""]]) head.append(div(cls, h));
    this.root.append(style, head);
    this.root.dataset.total = String(model.get("total"));
    host.append(this.root);
    if (!model.get("total")) this.root.append(div("nsys-tree-note", "no NVTX ranges in this profile"));
    else void this.loadRoots(0, null);
  }

  private async loadRoots(offset: number, more: HTMLElement | null): Promise<void> {
    try {
      const r = await this.req.ask({ kind: "roots", offset, limit: PAGE });
      const nodes = r.nodes ?? [];
      if (offset === 0) this.longest = nodes.reduce((m, n) => Math.max(m, n.end - n.start), 1);
      const frag = document.createDocumentFragment();
      for (const n of nodes) frag.append(this.row(n, 0));
      const shown = offset + nodes.length;
      const total = r.total ?? shown;
      if (more) more.remove();
      this.root.append(frag);
      this.root.dataset.shown = String(shown);
      if (shown < total) {
        const m = div("nsys-tree-more", `show ${Math.min(PAGE, total - shown)} more of ${total - shown} remaining roots`);
        m.onclick = () => void this.loadRoots(shown, m);
        this.root.append(m);
      }
    } catch (e) {
      this.root.append(div("nsys-tree-err", String(e)));
    }
  }

  private row(n: Node, depth: number): HTMLElement {
    const r = div("nsys-tree-row");
    r.dataset.depth = String(depth);
    const name = div("nsys-tree-name");
    name.style.paddingLeft = `${depth * 14}px`;
    const toggle = document.createElement("span");
    toggle.className = "nsys-tree-toggle";
    const expandable = n.childCount === null || n.childCount > 0;
    toggle.textContent = expandable ? "▸" : "";
    const label = n.name + (n.instances && n.instances > 1 ? ` ×${n.instances}` : "");
    name.append(toggle, document.createTextNode(label));
    name.title = `${n.name}${n.domain ? ` (domain ${n.domain})` : ""}`;
    const cpu = n.cpuNs ?? n.end - n.start;
    const gd = n.gpuStart != null && n.gpuEnd != null && n.gpuEnd >= n.gpuStart ? n.gpuEnd - n.gpuStart : null;
    const bar = div("nsys-tree-bar");
    bar.style.width = `${Math.max(1, Math.min(100, (100 * cpu) / this.longest))}%`;
    const barCell = div("");
    barCell.append(bar);
    r.append(name, div("nsys-tree-num", fmtDur(cpu)), div("nsys-tree-num", gd == null ? "–" : fmtDur(gd)),
      div("nsys-tree-num", String(n.opCount ?? 0)), div("nsys-tree-num", fmtDur(n.kernelNs ?? 0)), barCell);
    if (!expandable) return r;

    let open = false;
    let loading = false;
    let shown: HTMLElement[] = [];
    const collapse = () => {
      for (const e of shown) {
        e.dispatchEvent(new CustomEvent("nsys-collapse"));
        e.remove();
      }
      shown = [];
    };
    r.addEventListener("nsys-collapse", collapse);
    toggle.addEventListener("click", async () => {
      if (loading) return;
      open = !open;
      toggle.textContent = open ? "▾" : "▸";
      if (!open) return collapse();
      loading = true;
      try {
        const reply = await this.req.ask({ kind: "children", key: n.key });
        const kids = reply.nodes ?? [];
        let anchor: Element = r;
        const rows = kids.length ? kids.map((k) => this.row(k, depth + 1)) : [div("nsys-tree-note", "no nested ranges")];
        for (const kr of rows) {
          kr.style.paddingLeft = kr.classList.contains("nsys-tree-note") ? `${(depth + 1) * 14 + 22}px` : "";
          anchor.after(kr);
          anchor = kr;
          shown.push(kr);
        }
      } catch (e) {
        const err = div("nsys-tree-err", String(e));
        r.after(err);
        shown.push(err);
      } finally {
        loading = false;
        this.root.dataset.rows = String(this.root.querySelectorAll(".nsys-tree-row").length);
      }
    });
    return r;
  }

  dispose(): void {
    this.req.dispose();
  }
}

export default {
  render({ model, el }: RenderProps<Model>): () => void {
    const t = new Tree(new Requests(model), model, el);
    return () => t.dispose();
  },
};
