import type {
  AcceptResult,
  ParseResult,
  WebhookPieces,
  WebhookRoute,
  WebhookRequest,
} from "../channel.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import {
  slackHttpAccounts,
  slackSecrets,
  type SlackAccount,
  type SlackChannelConfig,
} from "./config.ts";
import { slackBotIdentityFromCallback } from "./identity.ts";
import { classifySlackRequest, type SlackRequest } from "./classify.ts";
import { envelopeFromEvent, envelopeFromSlashCommand } from "./parse.ts";
import type { SlackParseResult } from "./parse-context.ts";
import { envelopeFromInteraction } from "./system-events.ts";
import { verifySlackSignature } from "./verify.ts";

/**
 * The Slack Request URL: one POST path per account (`webhookPath`, default /slack/events) for
 * events, slash commands and interactivity. The generic handler (workers/webhooks.ts) runs these
 * pieces in order; no Slack API call sits on this path (the bot's ids come from the payload).
 * A failed accept answers 500 so Slack retries (its retries carry the same event_id, deduplicated
 * by the SessionDO) — except slash commands, which Slack never retries: those get an ephemeral
 * "try again" instead.
 */

/** Slack's payloads are small; 1 MiB is far above any real event and bounds what is read pre-auth. */
export const SLACK_MAX_BODY_BYTES = 1024 * 1024;

/** ackHint of a slash command: its failure is told to the user, not answered with 5xx. */
const SLASH_HINT = "slash";

export const slackWebhook: WebhookPieces<SlackAccount, SlackChannelConfig> = {
  routes: (slack) =>
    webhookRoutes("Slack", slackHttpAccounts(slack, logClash("slack", "webhookPath"))),
  maxBodyBytes: () => SLACK_MAX_BODY_BYTES,
  async verify(request: WebhookRequest, route: WebhookRoute<SlackAccount>, env) {
    const { signingSecret } = slackSecrets(route.account, env);
    const verified = await verifySlackSignature(
      request.raw,
      request.headers,
      signingSecret,
      request.receivedAt,
    );
    return verified.ok ? { ok: true } : { ok: false, reason: verified.reason };
  },
  parse(request, route): ParseResult {
    return parsedSlackRequest(
      classifySlackRequest(request.raw, request.headers.get("content-type")),
      route.account,
      request.receivedAt,
      "http",
    );
  },
  ack(result: AcceptResult) {
    if (result.ackHint !== SLASH_HINT) return defaultWebhookAck(result);
    // The answer follows through response_url; an empty 200 shows nothing extra. Slack does not
    // retry slash commands, so a failed accept is told to the user instead of answered with 5xx.
    if (result.allStored) return new Response(null, { status: 200 });
    return Response.json({
      response_type: "ephemeral",
      text: "Sorry, that could not be queued. Please try again.",
    });
  },
};

/**
 * A classified Slack request → what the pipeline stores. Shared by the Request URL and Socket Mode
 * (socket.ts), so one event yields the same envelope and dedup key whichever way it arrived.
 * Over a socket there is no HTTP answer to give: handshakes and a disabled slash command are dropped.
 */
export function parsedSlackRequest(
  classified: SlackRequest,
  account: SlackAccount,
  receivedAt: number,
  transport: "http" | "socket",
): ParseResult {
  switch (classified.kind) {
    case "malformed":
      return { kind: "malformed", reason: classified.reason };
    case "url_verification":
      if (transport === "socket")
        return { kind: "envelopes", envelopes: [], dropped: ["url_verification over Socket Mode"] };
      return { kind: "respond", response: Response.json({ challenge: classified.challenge }) };
    case "ssl_check":
    case "app_rate_limited":
      if (transport === "socket")
        return { kind: "envelopes", envelopes: [], dropped: [classified.kind] };
      return { kind: "respond", response: new Response(null, { status: 200 }) };
    case "event": {
      // The bot's ids come from the event's envelope: nothing but verification and the durable
      // accept may sit between Slack and its ack (no auth.test here; a cold isolate would wait on it).
      const bot = slackBotIdentityFromCallback(classified.callback);
      return envelopes(envelopeFromEvent(classified.callback, { account, bot, receivedAt }));
    }
    case "interaction":
      return envelopes(
        envelopeFromInteraction(classified.interaction, { account, bot: {}, receivedAt }),
      );
    case "slash": {
      const parsed = envelopeFromSlashCommand(classified.command, { account, bot: {}, receivedAt });
      if ("dropped" in parsed) {
        if (transport === "socket")
          return { kind: "envelopes", envelopes: [], dropped: [parsed.dropped] };
        return {
          kind: "respond",
          response: Response.json({
            response_type: "ephemeral",
            text: "This command is not enabled here.",
          }),
        };
      }
      return { kind: "envelopes", envelopes: [parsed.envelope], ackHint: SLASH_HINT };
    }
  }
}

function envelopes(parsed: SlackParseResult): ParseResult {
  if ("dropped" in parsed) return { kind: "envelopes", envelopes: [], dropped: [parsed.dropped] };
  return { kind: "envelopes", envelopes: [parsed.envelope] };
}
