import type {
  OutboundMessage,
  ProgressContext,
  ProgressEvent,
  ProgressState,
  SendContext,
  SendResult,
} from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  sendCompanionCommand,
  type CompanionCommand,
  type CompanionCommandResult,
} from "../companion/outbound-client.ts";
import { replyToModeFor, type SignalAccount } from "./config.ts";
import { signalText } from "./format.ts";

/**
 * Replies go out through the companion that holds the account's signal-cli session: one signed
 * `POST /v1/outbound` per chunk (functions/channels/companion/outbound-client.ts), which the
 * companion's Signal connector turns into JSON-RPC `send` (companion/sender.ts), the Markdown as
 * text with signal-cli's style ranges (format.ts).
 *
 * Idempotency: the command id is derived from the chunk's outbox id (hashed with the account and
 * the conversation, since an outbox id is unique only within its session), so a retry after a lost
 * answer is the same command. The companion answers a command it has done from its receipt (with
 * the Signal timestamp of the message it made) and never sends it twice; a command whose send may
 * or may not have left (signal-cli's answer lost) is answered `outcome_unknown`, once and for all,
 * and is not sent again — the outbox tells the user once instead.
 */
export async function sendSignalMessage(
  message: OutboundMessage,
  ctx: SendContext<SignalAccount>,
): Promise<SendResult> {
  if (message.retract) return { ok: true }; // no previews are posted, so there is nothing to take back
  const account = ctx.account;
  if (!account) return { ok: false, retryable: false, error: "channels.signal is not configured" };
  const { route } = message;
  const group = route.extra?.group === "1";
  const quote = quotes(replyToModeFor(account, group), message.chunkIndex);
  const { text, textStyle } = signalText(message.text);
  const command: CompanionCommand = {
    commandId: await commandId("send", route, message.id),
    channel: "signal",
    accountId: route.accountId,
    op: "send",
    target: {
      conversationId: route.to,
      ...(quote && route.replyToMessageId ? { replyToId: route.replyToMessageId } : {}),
    },
    payload: {
      text,
      ...(textStyle.length ? { textStyle } : {}),
      ...(quote && route.extra?.author ? { quoteAuthor: route.extra.author } : {}),
    },
  };
  return sendResult(await sendThroughCompanion(command, ctx));
}

/** `replyToMode`: "first" (and "batched") quote the trigger in the first chunk, "all" in every one. */
function quotes(mode: string, chunkIndex: number): boolean {
  return mode === "all" || ((mode === "first" || mode === "batched") && chunkIndex === 0);
}

function sendThroughCompanion(
  command: CompanionCommand,
  ctx: SendContext<SignalAccount>,
): Promise<CompanionCommandResult> {
  const settings = ctx.config.companion;
  return sendCompanionCommand(
    {
      url: settings.url,
      outboundKeys: settings.outboundKeys,
      outboundTimeoutMs: settings.outboundTimeoutMs,
    },
    ctx.env,
    command,
  );
}

function sendResult(result: CompanionCommandResult): SendResult {
  if (result.outcome === "sent")
    return { ok: true, platformMessageId: result.platformMessageIds[0] };
  if (result.outcome === "transient")
    return {
      ok: false,
      retryable: true,
      ...(result.retryAfterMs ? { retryAfterMs: result.retryAfterMs } : {}),
      error: result.reason,
    };
  if (result.reason.includes("(outcome_unknown)"))
    return {
      ok: false,
      retryable: false,
      error: `signal-cli's answer to this send was lost, so it may have been delivered; not sent again (${result.reason})`,
    };
  return { ok: false, retryable: false, error: result.reason };
}

/** A stable command id: `sg` + SHA-256 of op, account, conversation and the caller's id. */
export async function commandId(op: string, route: ReplyRoute, id: string): Promise<string> {
  const key = `${op}\u0000${route.accountId}\u0000${route.to}\u0000${id}`;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)),
  );
  return `sg${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * While the agent works: a read receipt for the triggering DM when `sendReadReceipts` is on
 * (signal-cli has none for groups), typing started at the run's start and stopped at its end
 * (signal-cli's `sendTyping`). Best effort: never throws.
 */
export async function signalProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<SignalAccount>,
): Promise<ProgressState> {
  if (event.type !== "run-started" && event.type !== "run-finished") return state;
  const run = ctx.runId ?? String(Date.now());
  const commands: CompanionCommand[] = [];
  const base = { channel: "signal", accountId: route.accountId };
  const group = route.extra?.group === "1";
  if (
    event.type === "run-started" &&
    ctx.account?.sendReadReceipts &&
    !group &&
    route.replyToMessageId &&
    state.readReceipt !== route.replyToMessageId
  )
    commands.push({
      ...base,
      commandId: await commandId("markRead", route, route.replyToMessageId),
      op: "markRead",
      target: { conversationId: route.to, messageId: route.replyToMessageId },
    });
  commands.push({
    ...base,
    commandId: await commandId(`typing:${event.type}`, route, run),
    op: "typing",
    target: { conversationId: route.to },
    payload: { stop: event.type === "run-finished" },
  });
  let next = state;
  for (const command of commands) {
    const result = await sendThroughCompanion(command, ctx).catch(() => undefined);
    if (command.op === "markRead" && result?.outcome === "sent")
      next = { ...next, readReceipt: route.replyToMessageId! };
  }
  return next;
}
