import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { chunkText } from "../chunk.ts";
import { activitiesPath, callConnector, connectorTarget } from "./api.ts";
import { markdownToTeams } from "./format.ts";

/**
 * One reply chunk out to Teams: POST {serviceUrl}/v3/conversations/{id}/activities, in the channel
 * thread when the route names one (`;messageid=<root>`), as Markdown text.
 *
 * Not idempotent: the Bot Connector takes no client id for an activity and Teams offers bots no way
 * to read a conversation's history back, so a send with no answer is reported as outcome unknown
 * and reconcile says "untraceable": the outbox then tells the user once instead of risking a
 * duplicate. 429 (with Retry-After), 5xx and 401 (token refreshed) are retried by the outbox.
 */
export async function sendTeamsMessage(message: OutboundMessage, ctx: SendContext): Promise<SendResult> {
  if (message.retract) return { ok: true };
  const target = connectorTarget(message.route, ctx);
  if ("error" in target) return { ok: false, retryable: false, error: target.error };
  const text = markdownToTeams(message.text);
  if (!text) return { ok: true };
  const [body] = chunkText(text, target.account.textChunkLimit, "length");
  return callConnector(target, "POST", activitiesPath(message.route), { type: "message", text: body, textFormat: "markdown" }, "send", ctx.signal);
}

export async function reconcileTeamsMessage(): Promise<ReconcileResult> {
  return { outcome: "untraceable", reason: "the Bot Connector has no idempotency key and bots cannot read conversation history", idempotent: false };
}
