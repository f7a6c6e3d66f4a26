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

/** A Float64Array view of a message buffer (copied when it is not 8-byte aligned). */
export function float64(buf: Buffer): Float64Array {
  if (buf instanceof ArrayBuffer) return new Float64Array(buf);
  const { buffer, byteOffset, byteLength } = buf as ArrayBufferView;
  if (byteOffset % 8 === 0) return new Float64Array(buffer, byteOffset, Math.floor(byteLength / 8));
  return new Float64Array(buffer.slice(byteOffset, byteOffset + byteLength));
}
