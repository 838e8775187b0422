import type { TelegramAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  postTracked,
  streamPreview,
  trackedKeys,
  type PostOutcome,
  type PreviewPlatform,
} from "../preview-stream.ts";
import { callBotApi } from "./client.ts";
import { markdownToTelegramHtml, escapeHtml } from "./format.ts";
import { deleteMessage, editText, sendText } from "./messages.ts";
import { telegramTarget, threadParams } from "./route.ts";

/**
 * Live feedback while the agent works (channels/telegram "streaming"), all best effort: a failure
 * is logged and never blocks the reply.
 * - `sendChatAction` typing when the run starts, renewed while it works (Telegram shows it ~5 s).
 * - `streaming.mode` partial/block: the answer so far is posted as a preview and edited in place
 *   (at most once a second; block mode at paragraph ends); the final send edits it into the answer.
 * - progress (the default): one status draft listing tool steps, materialised on the first tool
 *   step or once the run has been busy for a moment; removed when the run finishes, the answer
 *   then posted as a normal message.
 * - off: typing only.
 *
 * A pending mark is stored (checkpoint) before each preview or status post. Unlike Slack, Telegram
 * offers no way to find a message whose id was lost (a bot cannot read history): if a post's answer
 * is lost, the run stops previewing (`previewBroken`) rather than posting a second preview, and the
 * answer is posted normally; the lost post, if it landed, stays. That window is one request long.
 */

const PREVIEW_EDIT_INTERVAL_MS = 1000;
const TYPING_RENEW_MS = 4000;
/** A run busy this long without a tool step still gets its status draft (progress mode). */
const STATUS_DRAFT_DELAY_MS = 1500;
const STATUS_LABEL = "<i>Working…</i>";
const PREVIEW_KEYS = trackedKeys("preview", "previewMessageId");
/** The status draft's own id and pending mark; a lost one stops the preview the same way. */
const STATUS_KEYS = trackedKeys("status", "statusMessageId");

export async function telegramProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<TelegramAccount>,
): Promise<ProgressState> {
  const target = telegramTarget(ctx);
  if (!target?.botToken) return state;
  const bot = { account: target.account, botToken: target.botToken, signal: ctx.signal };
  const mode = target.account.streaming.mode;
  let next: ProgressState = { ...state };
  const now = Date.now();
  const warn = (what: string, detail: unknown) =>
    console.warn(
      `telegram progress ${what} failed`,
      typeof detail === "string" ? detail : JSON.stringify(detail).slice(0, 200),
    );

  const typing = async () => {
    const sent = await callBotApi(
      bot.account.apiRoot,
      bot.botToken,
      "sendChatAction",
      { chat_id: route.to, action: "typing", ...threadParams(route, "action") },
      ctx.signal,
    );
    if (sent.ok) next.typingAt = String(now);
    else warn("typing", sent);
  };
  const renewTyping = async () => {
    if (now - Number(next.typingAt ?? 0) >= TYPING_RENEW_MS) await typing();
  };

  /** Posts the preview or the status draft; preview-stream.ts marks it pending first and never posts it twice. */
  const post = async (
    kind: "preview" | "status",
    html: string,
    plain: string,
  ): Promise<PostOutcome> => {
    const sent = await sendText(
      bot,
      route.to,
      { html, plain },
      { ...threadParams(route, "message"), disable_notification: true },
    );
    if (sent.ok)
      return {
        ok: true,
        id: String(sent.result.message_id),
        extra: { previewChatId: String(sent.result.chat?.id ?? route.to) },
      };
    warn(`${kind} post`, sent);
    // Refused: nothing landed. Lost: it may have landed; the mark stays and previews stop.
    return { ok: false, landed: sent.kind === "refused" ? "no" : "maybe" };
  };
  const preview: PreviewPlatform<{ html: string; plain: string }> = {
    // The preview shows what the first chunk will hold; the final send replaces it exactly.
    render: (shown) => ({ html: markdownToTelegramHtml(shown) || "…", plain: shown || "…" }),
    post: (content) => post("preview", content.html, content.plain),
    edit: async (id, content) => {
      const edited = await editText(bot, next.previewChatId ?? route.to, id, content);
      if (!edited.ok) warn("preview edit", edited);
      return edited.ok;
    },
  };
  const statusText = () =>
    `${STATUS_LABEL}${next.statusSteps ? `\n${escapeHtml(next.statusSteps)}` : ""}`;
  const postStatus = async (plain: string) => {
    next = await postTracked(
      next,
      STATUS_KEYS,
      () => post("status", statusText(), plain),
      ctx,
      now,
    );
  };

  switch (event.type) {
    case "accepted":
      return next;
    case "run-started":
      next.runStartedAt = String(now);
      await typing();
      return next;
    case "text-delta": {
      await renewTyping();
      if (next.previewBroken) return next;
      if (mode === "progress") {
        if (
          !next.statusMessageId &&
          now - Number(next.runStartedAt ?? now) >= STATUS_DRAFT_DELAY_MS
        )
          await postStatus("Working…");
        return next;
      }
      if (mode !== "partial" && mode !== "block") return next;
      const limits = {
        editIntervalMs: PREVIEW_EDIT_INTERVAL_MS,
        maxChars: target.account.textChunkLimit,
        overflow: "cut" as const,
        block: mode === "block",
      };
      return streamPreview(next, event.soFar, preview, limits, PREVIEW_KEYS, ctx, now);
    }
    case "tool": {
      await renewTyping();
      const showSteps = mode === "progress" && target.account.streaming.progress.toolProgress;
      if (!showSteps || event.phase !== "start" || next.previewBroken) return next;
      next.statusSteps = `${next.statusSteps ? `${next.statusSteps}\n` : ""}• ${event.name}`
        .split("\n")
        .slice(-10)
        .join("\n");
      if (!next.statusMessageId) await postStatus(`Working…\n${next.statusSteps}`);
      else {
        const edited = await editText(bot, next.previewChatId ?? route.to, next.statusMessageId, {
          html: statusText(),
          plain: `Working…\n${next.statusSteps}`,
        });
        if (!edited.ok) warn("status edit", edited);
      }
      return next;
    }
    case "run-finished": {
      if (next.statusMessageId) {
        const removed = await deleteMessage(
          bot,
          next.previewChatId ?? route.to,
          next.statusMessageId,
        );
        if (removed.ok) delete next.statusMessageId;
        else warn("status removal", removed);
      }
      return next;
    }
  }
}
