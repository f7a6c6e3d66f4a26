/* Tiny DOM helpers. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') el.className = v;
    else el.setAttribute(k, v);
  }
  for (const c of children) el.append(c);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/* Theme variables, read once (getComputedStyle forces a style recalculation:
 * milliseconds per frame under load) and again after VS Code changes the theme
 * (it rewrites the style and class attributes of <html> and <body>; JupyterLab
 * sets data-jp-theme-name on <body>). */
const vars = new Map<string, string>();
const themeListeners: Array<() => void> = [];
let watching = false;
let themeRoot: Element | undefined;

/** Reads the theme's variables from `el` (while it is in the page) instead of
 * <body>: a host that defines them inside a shadow root (the notebook views). */
export function setThemeRoot(el: Element): void { themeRoot = el; vars.clear(); }

export function cssVar(name: string, fallback: string): string {
  if (!watching) {
    watching = true;
    const mo = new MutationObserver(() => { vars.clear(); for (const fn of themeListeners) fn(); });
    for (const el of [document.documentElement, document.body]) mo.observe(el, { attributes: true, attributeFilter: ['style', 'class', 'data-jp-theme-name'] });
  }
  let v = vars.get(name);
  if (v === undefined) { v = getComputedStyle(themeRoot?.isConnected ? themeRoot : document.body).getPropertyValue(name).trim(); vars.set(name, v); }
  return v || fallback;
}

/** Calls `fn` after the theme's variables changed. */
export function onThemeChange(fn: () => void): void { themeListeners.push(fn); }
