import type { DiscordAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  postTracked,
  streamPreview,
  trackedKeys,
  type PostOutcome,
  type PreviewPlatform,
} from "../preview-stream.ts";
import { discordRequest } from "./rest.ts";
import { discordTarget, referenceFor } from "./send.ts";

/**
 * Live feedback while the agent works, best effort (a failure is logged, never blocks the reply):
 * - typing (`POST /channels/{id}/typing`) when the run starts, renewed while it works (Discord shows
 *   it for ~10 s);
 * - `streaming.mode` partial/block: the answer so far is posted once and edited in place (PATCH, at
 *   most every 1.5 s: Discord allows ~5 edits per 5 s per channel; block mode at paragraph ends); the
 *   final send edits it into the answer (send.ts);
 * - progress: one status draft listing tool steps (`streaming.progress.maxLines`), deleted when the
 *   run finishes, the answer then posted normally;
 * - off (Discord's default): typing only.
 * A preview post is marked pending (checkpoint) before it is made; if its answer is lost the run stops
 * previewing rather than risk a second preview. Slash-command runs show Discord's own "thinking…".
 */

const PREVIEW_EDIT_INTERVAL_MS = 1500;
const TYPING_RENEW_MS = 8000;
const PREVIEW_KEYS = trackedKeys("preview", "previewMessageId");
/** The status draft's own id and pending mark; a lost one stops the preview the same way. */
const STATUS_KEYS = trackedKeys("status", "statusMessageId");

export async function discordProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<DiscordAccount>,
): Promise<ProgressState> {
  const target = discordTarget(ctx);
  if (!target?.token || route.extra?.interactionToken) return state;
  const { call, account } = target;
  const mode = account.streaming.mode;
  let next: ProgressState = { ...state };
  const now = Date.now();
  const warn = (what: string, detail: unknown) =>
    console.warn(`discord progress ${what} failed`, JSON.stringify(detail).slice(0, 200));
  const flags = account.suppressEmbeds ? { flags: 1 << 2 } : {};

  const typing = async () => {
    const sent = await discordRequest(call, "POST", `/channels/${route.to}/typing`);
    if (sent.ok) next.typingAt = String(now);
    else warn("typing", sent);
  };
  const renewTyping = async () => {
    if (now - Number(next.typingAt ?? 0) >= TYPING_RENEW_MS) await typing();
  };
  /** Posts the preview or the status draft; preview-stream.ts marks it pending first and never posts it twice. */
  const post = async (kind: "preview" | "status", content: string): Promise<PostOutcome> => {
    // The preview becomes the answer's first chunk, so it quotes the user's message as that chunk would.
    const reference = kind === "preview" ? referenceFor(route, account, 0) : {};
    const sent = await discordRequest<{ id: string }>(
      call,
      "POST",
      `/channels/${route.to}/messages`,
      { content, allowed_mentions: { parse: [] }, ...flags, ...reference },
    );
    if (sent.ok) return { ok: true, id: sent.result.id, extra: { previewChannelId: route.to } };
    warn(`${kind} post`, sent);
    return { ok: false, landed: sent.kind === "refused" ? "no" : "maybe" };
  };
  const edit = async (id: string, content: string) => {
    const edited = await discordRequest(call, "PATCH", `/channels/${route.to}/messages/${id}`, {
      content,
      allowed_mentions: { parse: [] },
    });
    if (!edited.ok) warn("edit", edited);
    return edited.ok;
  };
  const preview: PreviewPlatform<string> = {
    render: (shown) => shown || "…",
    post: (content) => post("preview", content),
    edit,
  };
  const statusText = () => `*Working…*${next.statusSteps ? `\n${next.statusSteps}` : ""}`;

  switch (event.type) {
    case "accepted":
      return next;
    case "run-started":
      next.runStartedAt = String(now);
      await typing();
      return next;
    case "text-delta": {
      await renewTyping();
      if (mode !== "partial" && mode !== "block") return next;
      const limits = {
        editIntervalMs: PREVIEW_EDIT_INTERVAL_MS,
        maxChars: account.textChunkLimit,
        overflow: "cut" as const,
        block: mode === "block",
      };
      return streamPreview(next, event.soFar, preview, limits, PREVIEW_KEYS, ctx, now);
    }
    case "tool": {
      await renewTyping();
      if (
        mode !== "progress" ||
        !account.streaming.progress.toolProgress ||
        event.phase !== "start" ||
        next.previewBroken
      )
        return next;
      next.statusSteps = `${next.statusSteps ? `${next.statusSteps}\n` : ""}• ${event.name}`
        .split("\n")
        .slice(-account.streaming.progress.maxLines)
        .join("\n");
      if (!next.statusMessageId)
        next = await postTracked(next, STATUS_KEYS, () => post("status", statusText()), ctx, now);
      else if (!(await edit(next.statusMessageId, statusText()))) next.previewBroken = "1";
      return next;
    }
    case "run-finished": {
      if (next.statusMessageId) {
        const removed = await discordRequest(
          call,
          "DELETE",
          `/channels/${route.to}/messages/${next.statusMessageId}`,
        );
        if (removed.ok) delete next.statusMessageId;
        else warn("status removal", removed);
      }
      return next;
    }
  }
}
