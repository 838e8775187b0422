import type { ProgressContext, ProgressState, SendResult } from "./adapter.ts";

/**
 * A run's streaming preview, the same on every channel that can edit a message: the answer so far is
 * posted once on the first words, edited in place at most every `editIntervalMs` while it grows, and
 * the reply's first chunk is committed into it (or, if the platform says the preview is gone, posted
 * as a message of its own). A silent or aborted run removes it. The platform calls are passed in;
 * this file knows no platform.
 *
 * Crash and lost-answer rule: before the preview is posted its pending time is stored durably
 * (`ctx.checkpoint`). A post whose answer was lost may have landed, so a second preview is never
 * posted blind: the channel looks for it (`recover`, where the platform can be searched) or, where it
 * cannot, previewing stops for the run (the `broken` mark) and the final chunk is posted normally.
 * A failed edit also stops previewing; the final commit still tries the preview once more.
 */

/**
 * Where one tracked message keeps its facts in the run's progress state. The names are the
 * channel's own (runs stored before a deploy keep theirs), so they are data, not fixed here.
 */
export interface TrackedKeys {
  /** The platform's id of the posted message. */
  id: string;
  /** Set (to the time) while a post is in flight: its answer is not known yet. */
  pending: string;
  /** When the message was last posted or edited (ms), for the throttle. */
  editedAt: string;
  /** Set once previewing stopped for this run. */
  broken: string;
}

/** The usual names: `<prefix>PendingAt`, `<prefix>EditedAt` (unless named), and one `previewBroken` mark a run. */
export function trackedKeys(
  prefix: string,
  id: string,
  editedAt = `${prefix}EditedAt`,
): TrackedKeys {
  return { id, pending: `${prefix}PendingAt`, editedAt, broken: "previewBroken" };
}

/** A post's outcome: the new message's id (and any more state to keep, e.g. its channel), or whether it may have landed. */
export type PostOutcome =
  | { ok: true; id: string; extra?: ProgressState }
  | { ok: false; landed: "no" | "maybe" };

/** The platform side of a preview. Each call logs its own failure and answers it as a value; a throw is not caught here. */
export interface PreviewPlatform<Content> {
  /** The message content for the text shown (already cut to `maxChars`); undefined: nothing to show yet. */
  render(shown: string): Content | undefined;
  post(content: Content): Promise<PostOutcome>;
  /** Whether the edit took. */
  edit(id: string, content: Content): Promise<boolean>;
  /**
   * Searches the platform for a preview whose post lost its answer, posted since `pendingSince`: its
   * id, undefined when none landed, "unknown" when the search failed. Left out where the platform
   * cannot be searched: then a lost post stops previewing.
   */
  recover?(pendingSince: number): Promise<string | undefined | "unknown">;
}

/** A channel's bounds for its preview. */
export interface PreviewLimits {
  /** Fewest ms between two edits (platform rate limits). */
  editIntervalMs: number;
  /** Most characters shown: what the reply's first chunk will hold, so the commit replaces it exactly. */
  maxChars: number;
  /** Past `maxChars`: "cut" shows the beginning; "stop" stops updating (the final text replaces it). */
  overflow: "cut" | "stop";
  /** Block mode: once posted, the preview changes only at paragraph ends, so a reader sees whole blocks appear. */
  block: boolean;
}

/**
 * Posts a tracked message once: the pending mark is checkpointed first, so a crash or a lost answer
 * leaves a trace. A pending mark already there means an earlier post's answer was lost: nothing is
 * posted and the run stops previewing. Returns the new state.
 */
export async function postTracked(
  state: ProgressState,
  keys: TrackedKeys,
  post: () => Promise<PostOutcome>,
  ctx: Pick<ProgressContext, "checkpoint">,
  now = Date.now(),
): Promise<ProgressState> {
  const next: ProgressState = { ...state };
  if (next[keys.pending]) {
    next[keys.broken] = "1";
    return next;
  }
  next[keys.pending] = String(now);
  ctx.checkpoint?.(next);
  const posted = await post();
  if (posted.ok) {
    next[keys.id] = posted.id;
    Object.assign(next, posted.extra);
    next[keys.editedAt] = String(now);
    delete next[keys.pending];
    return next;
  }
  // Refused: nothing landed, the mark goes. Lost: it may have landed; the mark stays for the final send.
  if (posted.landed === "no") delete next[keys.pending];
  next[keys.broken] = "1";
  return next;
}

/** One step of the preview for the answer so far (`soFar`): post, edit, or wait. Returns the new state. */
export async function streamPreview<Content>(
  state: ProgressState,
  soFar: string,
  platform: PreviewPlatform<Content>,
  limits: PreviewLimits,
  keys: TrackedKeys,
  ctx: Pick<ProgressContext, "checkpoint">,
  now = Date.now(),
): Promise<ProgressState> {
  if (state[keys.broken]) return state;
  const posted = state[keys.id];
  if (limits.block && posted && !soFar.endsWith("\n\n")) return state;
  if (posted && now - Number(state[keys.editedAt] ?? 0) < limits.editIntervalMs) return state;
  if (limits.overflow === "stop" && soFar.length > limits.maxChars) return state;
  const content = platform.render(soFar.slice(0, limits.maxChars));
  if (content === undefined) return state;

  const next: ProgressState = { ...state };
  if (!posted && next[keys.pending] && platform.recover) {
    const found = await platform.recover(Number(next[keys.pending]));
    if (found === "unknown") {
      next[keys.broken] = "1";
      return next;
    }
    if (found) next[keys.id] = found;
    delete next[keys.pending];
  }
  const id = next[keys.id];
  if (!id) return postTracked(next, keys, () => platform.post(content), ctx, now);
  if (await platform.edit(id, content)) next[keys.editedAt] = String(now);
  else next[keys.broken] = "1";
  return next;
}

/**
 * The reply's first chunk into the run's preview. `edit` answers "gone" when the platform refused it
 * for good (deleted, too old): the chunk is then posted instead, and `discard` removes the stale
 * preview where the channel wants that (best effort). Any other failed edit is returned for the
 * outbox to retry or reconcile; a lost edit is safe to repeat.
 */
export async function commitPreview(args: {
  previewId: string | undefined;
  edit(id: string): Promise<SendResult | "gone">;
  post(): Promise<SendResult>;
  discard?(id: string): Promise<unknown>;
}): Promise<SendResult> {
  const { previewId } = args;
  if (previewId) {
    const edited = await args.edit(previewId);
    if (edited !== "gone") return edited.ok ? { ok: true, platformMessageId: previewId } : edited;
  }
  const sent = await args.post();
  if (sent.ok && previewId && args.discard) await args.discard(previewId).catch(() => undefined);
  return sent;
}

/**
 * A run that ends without a reply: removes its preview messages (`remove` answers ok for one already
 * gone). The first failure is returned for the outbox to retry; deleting twice is harmless.
 */
export async function retractPreview(
  ids: Array<string | undefined>,
  remove: (id: string) => Promise<SendResult>,
): Promise<SendResult> {
  for (const id of ids) {
    if (!id) continue;
    const removed = await remove(id);
    if (!removed.ok) return removed;
  }
  return { ok: true };
}
