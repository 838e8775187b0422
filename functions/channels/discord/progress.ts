import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../envelope.ts";
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

export async function discordProgress(route: ReplyRoute, event: ProgressEvent, state: ProgressState, ctx: ProgressContext): Promise<ProgressState> {
  const target = discordTarget(route, ctx);
  if (!target?.token || route.extra?.interactionToken) return state;
  const { call, account } = target;
  const mode = account.streaming.mode;
  const next: ProgressState = { ...state };
  const now = Date.now();
  const warn = (what: string, detail: unknown) => console.warn(`discord progress ${what} failed`, JSON.stringify(detail).slice(0, 200));
  const flags = account.suppressEmbeds ? { flags: 1 << 2 } : {};

  const typing = async () => {
    const sent = await discordRequest(call, "POST", `/channels/${route.to}/typing`);
    if (sent.ok) next.typingAt = String(now);
    else warn("typing", sent);
  };
  const renewTyping = async () => {
    if (now - Number(next.typingAt ?? 0) >= TYPING_RENEW_MS) await typing();
  };
  const post = async (kind: "preview" | "status", content: string) => {
    const pendingKey = `${kind}PendingAt`;
    if (next[pendingKey]) {
      next.previewBroken = "1";
      return;
    }
    next[pendingKey] = String(now);
    ctx.checkpoint?.(next);
    // The preview becomes the answer's first chunk, so it quotes the user's message as that chunk would.
    const reference = kind === "preview" ? referenceFor(route, account, 0) : {};
    const sent = await discordRequest<{ id: string }>(call, "POST", `/channels/${route.to}/messages`, { content, allowed_mentions: { parse: [] }, ...flags, ...reference });
    if (sent.ok) {
      next[`${kind}MessageId`] = sent.result.id;
      next.previewChannelId = route.to;
      next[`${kind}EditedAt`] = String(now);
      delete next[pendingKey];
    } else {
      warn(`${kind} post`, sent);
      if (sent.kind === "refused") delete next[pendingKey];
      next.previewBroken = "1";
    }
  };
  const edit = async (id: string, content: string) => {
    const edited = await discordRequest(call, "PATCH", `/channels/${route.to}/messages/${id}`, { content, allowed_mentions: { parse: [] } });
    if (!edited.ok) {
      warn("edit", edited);
      next.previewBroken = "1";
    }
    return edited.ok;
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
      if (next.previewBroken || (mode !== "partial" && mode !== "block")) return next;
      if (mode === "block" && next.previewMessageId && !event.soFar.endsWith("\n\n")) return next;
      if (next.previewMessageId && now - Number(next.previewEditedAt ?? 0) < PREVIEW_EDIT_INTERVAL_MS) return next;
      const shown = event.soFar.slice(0, account.textChunkLimit) || "…";
      if (!next.previewMessageId) await post("preview", shown);
      else if (await edit(next.previewMessageId, shown)) next.previewEditedAt = String(now);
      return next;
    }
    case "tool": {
      await renewTyping();
      if (mode !== "progress" || !account.streaming.progress.toolProgress || event.phase !== "start" || next.previewBroken) return next;
      next.statusSteps = `${next.statusSteps ? `${next.statusSteps}\n` : ""}• ${event.name}`.split("\n").slice(-account.streaming.progress.maxLines).join("\n");
      if (!next.statusMessageId) await post("status", statusText());
      else await edit(next.statusMessageId, statusText());
      return next;
    }
    case "run-finished": {
      if (next.statusMessageId) {
        const removed = await discordRequest(call, "DELETE", `/channels/${route.to}/messages/${next.statusMessageId}`);
        if (removed.ok) delete next.statusMessageId;
        else warn("status removal", removed);
      }
      return next;
    }
  }
}
