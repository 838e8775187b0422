import type { WebhookPieces, WebhookRoute } from "../channel.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import {
  msTeamsCredentials,
  msTeamsWebhookAccounts,
  type MsTeamsAccount,
  type MsTeamsChannelConfig,
} from "./config.ts";
import { parseTeamsActivity } from "./parse.ts";
import { verifyBotFrameworkToken } from "./verify.ts";

/**
 * The inbound half of Microsoft Teams for the generic webhook handler: the Bot Framework messaging
 * endpoint, one POST path per account (`webhook.path`, default /api/messages). The bearer JWT is
 * checked before the activity is parsed; the activity is stored durably before the 200 (503 when
 * not, so the Bot Framework sends it again; dedup on conversation + activity id makes that safe).
 * Replies never ride on the HTTP answer: they go through the Bot Connector API once the agent ran.
 * An invoke is answered 200 with an invoke response (adaptive card actions show "Received").
 */

/** Teams activities are small (inline images are links); this bounds what is read before the token is checked. */
export const MSTEAMS_MAX_BODY_BYTES = 256 * 1024;

const decoder = new TextDecoder();

export const msTeamsWebhook: WebhookPieces<MsTeamsAccount, MsTeamsChannelConfig> = {
  routes(teams: MsTeamsChannelConfig): WebhookRoute<MsTeamsAccount>[] {
    return webhookRoutes(
      "Microsoft Teams",
      msTeamsWebhookAccounts(teams, logClash("msteams", "webhook.path")),
    );
  },

  maxBodyBytes: () => MSTEAMS_MAX_BODY_BYTES,

  async verify(request, route, env) {
    const credentials = msTeamsCredentials(route.account, env);
    if ("error" in credentials) {
      console.error(`channels.msteams: ${credentials.error}; refusing requests`);
      return { ok: false, status: 401, reason: "no-secret" };
    }
    const result = await verifyBotFrameworkToken(
      request.headers.get("authorization"),
      activityServiceUrl(request.raw),
      route.account,
      credentials,
      request.receivedAt,
    );
    if (result.ok) return result;
    if (result.reason.startsWith("keys unavailable"))
      return { ok: false, status: 503, reason: result.reason };
    return { ok: false, status: 401, reason: result.reason };
  },

  parse(request, route, env) {
    const result = parseTeamsActivity(
      request.raw,
      route.account,
      request.receivedAt,
      requiredTenant(route.account, env),
    );
    if ("malformed" in result) return { kind: "malformed", reason: result.malformed };
    const ackHint = result.invoke ? `invoke:${result.invoke}` : undefined;
    if ("dropped" in result)
      return { kind: "envelopes", envelopes: [], dropped: [result.dropped], ackHint };
    return { kind: "envelopes", envelopes: [result.envelope], ackHint };
  },

  ack(result) {
    const base = defaultWebhookAck(result);
    if (!result.allStored)
      return new Response(JSON.stringify({ error: "not accepted, retry" }), {
        status: 503,
        headers: withJson(base.headers),
      });
    if (result.ackHint === "invoke:adaptiveCard/action") {
      const body = {
        statusCode: 200,
        type: "application/vnd.microsoft.activity.message",
        value: "Received",
      };
      return new Response(JSON.stringify(body), { status: 200, headers: withJson(base.headers) });
    }
    return new Response(result.ackHint?.startsWith("invoke:") ? "{}" : null, {
      status: 200,
      headers: result.ackHint ? withJson(base.headers) : base.headers,
    });
  },
};

/**
 * The tenant every activity must name: the configured tenantId of a SingleTenant app. A MultiTenant
 * app (appType set so) serves every tenant that installed it.
 */
function requiredTenant(account: MsTeamsAccount, env: Record<string, unknown>): string | undefined {
  const credentials = msTeamsCredentials(account, env);
  if ("error" in credentials || credentials.appType !== "SingleTenant") return undefined;
  return credentials.tenantId;
}

function withJson(headers: Headers): Headers {
  const copy = new Headers(headers);
  copy.set("content-type", "application/json");
  return copy;
}

/** The activity's serviceUrl, read before verification only to compare with the token's claim. */
function activityServiceUrl(raw: Uint8Array): string | undefined {
  try {
    const value = (JSON.parse(decoder.decode(raw)) as { serviceUrl?: unknown }).serviceUrl;
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
