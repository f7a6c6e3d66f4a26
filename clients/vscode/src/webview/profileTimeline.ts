/* A TimelineView of one profile drawn on another clock (offsets from `at`, a
 * time of the profile's clock), for the views over several profiles; and the
 * link that keeps timelines on one clock in step. */
import { absTime, relTime, type Int } from '../client/exactJson';
import { rebaseColumns, type View } from '../client/timelineModel';
import type { RangeReply } from '../protocol/types';
import type { RequestName } from '../protocol/methods';
import type { ViewProfile } from '../protocol/viewMessages';
import { TimelineView, type Hit } from './timelineView';

/** What the views ask the server through: the webview's HostBridge, or the Jupyter widget's messages. */
export interface ViewRpc { request<R>(method: RequestName, params: Record<string, unknown>, signal?: AbortSignal): Promise<R> }

export function profileTimeline(bridge: ViewRpc, p: ViewProfile, at: bigint, bounds: { start: number; end: number }, onSelect: (hit: Hit) => void): TimelineView {
  const rpc = <R>(method: RequestName, params: Record<string, unknown>, signal?: AbortSignal) => bridge.request<R>(method, { ...params, profileId: p.profileId }, signal);
  const range = (q: Record<string, unknown> & { start: number; end: number }, signal?: AbortSignal) =>
    rpc<RangeReply>('timeline/range', { ...q, start: absTime(q.start, at), end: absTime(q.end, at) }, signal).then((r) => rebaseColumns(r, at));
  return new TimelineView(p.tracks.tracks, bounds, range, (kernelId) => rpc<Record<string, unknown>>('kernel/details', { kernelId }), onSelect, (t: Int) => relTime(t, at));
}

/** Keeps the timelines' views in step: a pan or zoom of any one moves the
 * others to the same time at the same x (the same ns per pixel from the same
 * left edge, whatever each one's width), and an area selection made in one is
 * made in the others (they share one clock). */
export function linkViews(views: TimelineView[]): void {
  let syncing = false;
  for (const a of views) {
    a.onRange = (r) => {
      if (syncing) return;
      syncing = true;
      try {
        for (const b of views) if (b !== a) b.setRange(r);
      } finally { syncing = false; }
    };
    a.addViewListener((v: View) => {
      if (syncing) return;
      syncing = true;
      try {
        for (const b of views) {
          if (b === a) continue;
          const w = b.currentView.width;
          b.setView({ start: v.start, end: v.start + ((v.end - v.start) * w) / v.width, width: w });
        }
      } finally { syncing = false; }
    });
  }
}
