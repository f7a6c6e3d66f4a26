// The NVTX tree widget: collapsible rows (children rendered on first expand),
// each with CPU time, projected GPU time, op count and kernel time, and a bar
// showing the range's share of its root's CPU time.
import { RenderProps } from "./anywidget";
import { fmtDur } from "./format";

interface Node {
  name: string;
  domain?: string | null;
  start: number;
  end: number;
  gpuStart?: number | null;
  gpuEnd?: number | null;
  opCount?: number;
  kernelNs?: number;
  count?: number;
  children?: Node[];
}

interface Model {
  roots: Node[];
  title: string;
}

const CSS = `
.nsys-tree { font: 12px system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; max-height: 480px; overflow: auto; padding: 4px 0; }
.nsys-tree-head, .nsys-tree-row { display: grid; grid-template-columns: minmax(240px, 1fr) 90px 90px 70px 90px 120px; gap: 6px;
  padding: 1px 8px; align-items: center; white-space: nowrap; }
.nsys-tree-head { font-weight: 600; border-bottom: 1px solid var(--jp-border-color2, #ddd); position: sticky; top: -4px;
  background: var(--jp-layout-color0, #fff); }
.nsys-tree-row:hover { background: rgba(128,128,128,.12); }
.nsys-tree-name { overflow: hidden; text-overflow: ellipsis; cursor: default; }
.nsys-tree-toggle { display: inline-block; width: 14px; cursor: pointer; user-select: none; color: var(--jp-ui-font-color2, #666); }
.nsys-tree-num { text-align: right; font-variant-numeric: tabular-nums; }
.nsys-tree-bar { height: 8px; background: hsl(265, 50%, 55%); border-radius: 2px; }
`;

function div(cls: string, text?: string): HTMLDivElement {
  const d = document.createElement("div");
  d.className = cls;
  if (text !== undefined) d.textContent = text;
  return d;
}

function gpuDur(n: Node): number | null {
  return n.gpuStart != null && n.gpuEnd != null && n.gpuEnd >= n.gpuStart ? n.gpuEnd - n.gpuStart : null;
}

function row(n: Node, depth: number, total: number): HTMLElement {
  const r = div("nsys-tree-row");
  r.dataset.depth = String(depth);
  const name = div("nsys-tree-name");
  name.style.paddingLeft = `${depth * 14}px`;
  const kids = n.children ?? [];
  const toggle = document.createElement("span");
  toggle.className = "nsys-tree-toggle";
  toggle.textContent = kids.length ? "▸" : "";
  name.append(toggle, document.createTextNode(n.name + (n.count && n.count > 1 ? ` ×${n.count}` : "")));
  name.title = `${n.name}${n.domain ? ` (domain ${n.domain})` : ""}`;
  const cpu = n.end - n.start;
  const gd = gpuDur(n);
  const bar = div("nsys-tree-bar");
  bar.style.width = `${Math.max(1, Math.min(100, (100 * cpu) / Math.max(1, total)))}%`;
  const barCell = div("");
  barCell.append(bar);
  r.append(name, div("nsys-tree-num", fmtDur(cpu)), div("nsys-tree-num", gd == null ? "–" : fmtDur(gd)),
    div("nsys-tree-num", String(n.opCount ?? 0)), div("nsys-tree-num", fmtDur(n.kernelNs ?? 0)), barCell);
  let open = false;
  let shown: HTMLElement[] = [];
  const collapse = () => {
    for (const e of shown) {
      e.dispatchEvent(new CustomEvent("nsys-collapse"));
      e.remove();
    }
    shown = [];
  };
  r.addEventListener("nsys-collapse", collapse);
  if (kids.length) {
    toggle.addEventListener("click", () => {
      open = !open;
      toggle.textContent = open ? "▾" : "▸";
      if (!open) return collapse();
      let anchor: Element = r;
      for (const k of kids) {
        const kr = row(k, depth + 1, total);
        anchor.after(kr);
        anchor = kr;
        shown.push(kr);
      }
    });
  }
  return r;
}

export default {
  render({ model, el }: RenderProps<Model>): void {
    const style = document.createElement("style");
    style.textContent = CSS;
    const root = div("nsys-tree");
    const head = div("nsys-tree-head");
    for (const h of [model.get("title") ? `NVTX · ${model.get("title")}` : "NVTX range", "CPU", "GPU (proj.)", "ops", "kernels", "share"]) {
      head.append(div(h === "CPU" || h === "GPU (proj.)" || h === "ops" || h === "kernels" ? "nsys-tree-num" : "", h));
    }
    root.append(style, head);
    const roots = model.get("roots") ?? [];
    if (!roots.length) root.append(div("nsys-tree-row", "no NVTX ranges in this profile"));
    // bars: share of the longest root's CPU time
    const longest = roots.reduce((m, n) => Math.max(m, n.end - n.start), 1);
    for (const n of roots.slice(0, 5000)) {
      const r = row(n, 0, longest);
      root.append(r);
    }
    if (roots.length > 5000) root.append(div("nsys-tree-row", `… ${roots.length - 5000} more roots`));
    root.dataset.roots = String(roots.length);
    el.append(root);
  },
};
