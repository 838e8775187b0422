import type { Context, Hono } from "hono";
import type { Env } from "../../../workers/env.ts";
import { ingestEnvelope } from "../../../workers/ingest.ts";
import { observeIngress } from "../../../workers/metrics.ts";
import { configFromEnv } from "../../config/load.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { InboundEnvelope } from "../envelope.ts";
import { slackConfig, slackHttpAccounts, slackSecrets, type SlackAccount, type SlackChannelConfig } from "./config.ts";
import { slackBotIdentityFromCallback } from "./identity.ts";
import { classifySlackRequest, envelopeFromEvent, envelopeFromInteraction, envelopeFromSlashCommand, type SlackParseResult } from "./parse.ts";
import { verifySlackSignature } from "./verify.ts";
import { readBodyCapped } from "../../http/read-body.ts";

/**
 * The Slack Request URL: one POST path per account (`webhookPath`, default /slack/events) for
 * events, slash commands and interactivity. Thin, in this order: cap the body → read the raw bytes
 * once → verify the v0 signature → answer handshakes → parse → route + durable accept → 200.
 * No Slack API call sits on this path (the bot's ids come from the payload).
 * A failed accept answers 500 so Slack retries (its retries carry the same event_id, deduplicated
 * by the SessionDO). Paths come from the config, which is only known per request, so this is a
 * middleware that claims matching POSTs and lets everything else through.
 */

/** Slack's payloads are small; 1 MiB is far above any real event and bounds what is read pre-auth. */
export const SLACK_MAX_BODY_BYTES = 1024 * 1024;

type SlackRoute = { slack: SlackChannelConfig; account: SlackAccount };
const routeTables = new WeakMap<EdgeclawConfig, Map<string, SlackRoute>>();

/** webhookPath → account, for accounts served over HTTP. A second account on the same path is refused. */
export function slackRouteTable(config: EdgeclawConfig): Map<string, SlackRoute> {
  let table = routeTables.get(config);
  if (table) return table;
  table = new Map();
  const slack = slackConfig(config);
  const clash = (accountId: string, path: string) => console.error(`channels.slack: account ${accountId} reuses webhookPath ${path}; not mounted`);
  for (const [path, account] of slack ? slackHttpAccounts(slack, clash) : []) table.set(path, { slack: slack!, account });
  routeTables.set(config, table);
  return table;
}

export function mountSlack(app: Hono<{ Bindings: Env }>): void {
  app.use("*", async (c, next) => {
    if (c.req.method !== "POST") return next();
    const route = slackRouteTable(configFromEnv(c.env)).get(c.req.path);
    if (!route) return next();
    const startedAt = Date.now();
    const response = await handleSlackRequest(c, route);
    observeIngress(c, "slack", response, startedAt);
    return response;
  });
}

async function handleSlackRequest(c: Context<{ Bindings: Env }>, { slack, account }: SlackRoute): Promise<Response> {
  const receivedAt = Date.now();
  const body = await readBodyCapped(c.req.raw, SLACK_MAX_BODY_BYTES);
  if (!body.ok) return c.json({ error: "body too large" }, 413);
  const raw = body.bytes;

  const secrets = slackSecrets(slack, account, c.env);
  const verified = await verifySlackSignature(raw, c.req.raw.headers, secrets.signingSecret, receivedAt);
  if (!verified.ok) {
    if (verified.reason === "no-secret") console.error(`channels.slack account ${account.accountId}: no signing secret; refusing requests`);
    return c.json({ error: `signature check failed: ${verified.reason}` }, 401);
  }

  const request = classifySlackRequest(raw, c.req.header("content-type") ?? null);
  switch (request.kind) {
    case "malformed":
      return c.json({ error: `malformed Slack request: ${request.reason}` }, 400);
    case "url_verification":
      return c.json({ challenge: request.challenge });
    case "ssl_check":
    case "app_rate_limited":
      return c.body(null, 200);
    case "event": {
      // The bot's ids come from the event's envelope: nothing but verification and the durable
      // accept may sit between Slack and its ack (no auth.test here; a cold isolate would wait on it).
      const bot = slackBotIdentityFromCallback(request.callback);
      return accept(c, envelopeFromEvent(request.callback, { account, bot, receivedAt }));
    }
    case "interaction":
      return accept(c, envelopeFromInteraction(request.interaction, { account, bot: {}, receivedAt }));
    case "slash": {
      const parsed = envelopeFromSlashCommand(request.command, { account, bot: {}, receivedAt });
      if ("dropped" in parsed) return c.json({ response_type: "ephemeral", text: "This command is not enabled here." });
      try {
        await ingest(c.env, parsed.envelope);
      } catch (error) {
        // Slack does not retry slash commands: tell the user instead of answering 5xx.
        console.error("slack slash command not accepted", error instanceof Error ? error.message : error);
        return c.json({ response_type: "ephemeral", text: "Sorry, that could not be queued. Please try again." });
      }
      // The answer follows through response_url; an empty 200 shows nothing extra.
      return c.body(null, 200);
    }
  }
}

async function accept(c: Context<{ Bindings: Env }>, parsed: SlackParseResult): Promise<Response> {
  if ("dropped" in parsed) return c.body(null, 200, { "x-edgeclaw-dropped": parsed.dropped.slice(0, 120) });
  try {
    const outcome = await ingest(c.env, parsed.envelope);
    if (outcome.status === "unrouted") return c.body(null, 200, { "x-edgeclaw-dropped": outcome.reason.slice(0, 120), "x-edgeclaw-ingest": "unrouted" });
    return c.body(null, 200, { "x-openclaw-delivery-accepted": "durable", "x-edgeclaw-ingest": outcome.status });
  } catch (error) {
    console.error("slack event not accepted", error instanceof Error ? error.message : error);
    return c.json({ error: "not accepted, retry" }, 500);
  }
}

function ingest(env: Env, envelope: InboundEnvelope) {
  return ingestEnvelope(env, envelope);
}
