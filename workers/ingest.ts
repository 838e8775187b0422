import type { Env } from "./env.ts";
import type { InboundEnvelope } from "../functions/core/envelope.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { isRejected, resolveAgentRoute } from "../functions/routing/resolve-route.ts";
import type { RoutedEvent } from "../durable-objects/session-api.ts";

export type IngestOutcome =
  | { status: "accepted" | "duplicate"; sessionKey: string }
  | { status: "unrouted"; reason: string };

/**
 * The hot path every channel shares after it has verified and parsed a platform event: route it
 * (config only — no Postgres here) and hand it to its SessionDO, which stores it durably before
 * this returns. A thrown error means "not stored": the channel answers 5xx so the platform retries.
 */
export async function ingestEnvelope(env: Env, envelope: InboundEnvelope): Promise<IngestOutcome> {
  const route = resolveAgentRoute(configFromEnv(env), envelope, {
    senderRoles: envelope.senderRoles,
  });
  if (isRejected(route)) return { status: "unrouted", reason: route.rejected };
  const event: RoutedEvent = { envelope, agentId: route.agentId, sessionKey: route.sessionKey };
  const result = await sessionStub(env, route.sessionKey).accept(event);
  return { status: result.status, sessionKey: route.sessionKey };
}

export function sessionStub(env: Env, sessionKey: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionKey));
}
