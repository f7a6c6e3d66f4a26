// DOM helpers shared by the widgets.
//
// Notebook hosts built on Lumino (JupyterLab 4, Notebook 7) handle keyboard shortcuts on the
// document in the capture phase, before the widget sees the key: in command mode `0` is held as
// the first key of "0, 0" (restart the kernel), Shift+Enter runs the cell, A/B/D insert or delete
// cells. Lumino walks from the focused element up and stops at the first element carrying
// `data-lm-suppress-shortcuts`, but it tests the selector on each element before reaching an
// ancestor's mark, so the mark must be on every element that can take focus, not only the root.

const FOCUSABLE = new Set(["BUTTON", "INPUT", "CANVAS", "A", "SELECT", "TEXTAREA"]);

/** Keys pressed on `e` belong to the widget, not to the notebook host. */
export function ownKeys(e: HTMLElement): void {
  e.setAttribute("data-lm-suppress-shortcuts", "true");
}

/** A new element; focusable ones keep their keys from the notebook host (see above). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (FOCUSABLE.has(e.tagName)) ownKeys(e);
  return e;
}
