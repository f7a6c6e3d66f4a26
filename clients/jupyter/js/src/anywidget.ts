// The slice of anywidget's front-end API these widgets use (see anywidget's docs:
// a module exporting `default { render({ model, el }) }`).

export type Buffer = DataView | ArrayBuffer | ArrayBufferView;

export interface AnyModel<T> {
  get<K extends keyof T>(key: K): T[K];
  set<K extends keyof T>(key: K, value: T[K]): void;
  save_changes(): void;
  on(event: "msg:custom", cb: (msg: unknown, buffers: Buffer[]) => void): void;
  on(event: string, cb: () => void): void;
  off(event?: string, cb?: unknown): void;
  send(content: unknown, callbacks?: unknown, buffers?: Buffer[]): void;
}

export interface RenderProps<T> {
  model: AnyModel<T>;
  el: HTMLElement;
}
