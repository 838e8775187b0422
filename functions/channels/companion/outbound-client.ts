import { resolveSecret, type SecretEnv, type SecretInput } from "../../config/secret-ref.ts";
import { signRequest } from "./signature.ts";

/**
 * Worker → companion: one session-bound command (`POST {companion.url}/v1/outbound`), signed with
 * the outbound key (the other direction's secret) and `Idempotency-Key: <commandId>`, so the
 * caller's retry of an ambiguous failure (same commandId) is answered from the companion's receipt
 * table instead of being sent twice. The answer is classified for the caller's outbox: sent /
 * duplicate → done; not_connected and 5xx/network → transient (retry with the same commandId);
 * rejected and other 4xx → permanent.
 */
export interface CompanionCommand {
  commandId: string;
  channel: string;
  accountId: string;
  op: "send" | "edit" | "delete" | "react" | "typing" | "markRead";
  target: { conversationId: string; threadId?: string; replyToId?: string; messageId?: string };
  payload?: Record<string, unknown>;
}

export type CompanionCommandResult =
  | { outcome: "sent"; duplicate: boolean; platformMessageIds: string[] }
  | { outcome: "transient"; reason: string; retryAfterMs?: number }
  | { outcome: "permanent"; reason: string };

/** The keys of `companion` this needs (config.companion passes as is). */
export interface CompanionOutboundSettings {
  url?: string;
  outboundKeys: Array<{ id: string; secret: SecretInput }>;
  outboundTimeoutMs: number;
}

export async function sendCompanionCommand(
  settings: CompanionOutboundSettings,
  env: SecretEnv,
  command: CompanionCommand,
  fetcher: typeof fetch = fetch,
): Promise<CompanionCommandResult> {
  const { url, outboundKeys, outboundTimeoutMs } = settings;
  if (!url)
    return {
      outcome: "permanent",
      reason: "companion.url is not set: no companion to send through",
    };
  const signing = outboundKeys[0];
  const secret = signing ? resolveSecret(signing.secret, env) : undefined;
  if (!signing || !secret)
    return {
      outcome: "permanent",
      reason:
        "no companion outbound key secret (companion.outboundKeys, EDGECLAW_COMPANION_OUTBOUND_SECRET)",
    };
  const target = new URL("v1/outbound", url.endsWith("/") ? url : `${url}/`);
  const body = JSON.stringify({ v: 1, ...command, payload: command.payload ?? {} });
  const headers = await signRequest(
    { id: signing.id, secret },
    {
      method: "POST",
      path: target.pathname,
      body: new TextEncoder().encode(body),
      timestamp: Math.floor(Date.now() / 1000),
    },
  );
  let response: Response;
  try {
    response = await fetcher(target.toString(), {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        "idempotency-key": command.commandId,
      },
      body,
      signal: AbortSignal.timeout(outboundTimeoutMs),
    });
  } catch (error) {
    return {
      outcome: "transient",
      reason: `companion unreachable: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const answer = (await response.json().catch(() => ({}))) as {
    status?: string;
    receipt?: { platformMessageIds?: string[] };
    retryAfterMs?: number;
    code?: string;
    error?: string;
  };
  if (response.status === 200 && (answer.status === "sent" || answer.status === "duplicate")) {
    return {
      outcome: "sent",
      duplicate: answer.status === "duplicate",
      platformMessageIds: answer.receipt?.platformMessageIds ?? [],
    };
  }
  const reason = `companion answered ${response.status}${answer.status ? ` ${answer.status}` : ""}${answer.code ? ` (${answer.code})` : ""}${answer.error ? `: ${answer.error}` : ""}`;
  if (response.status === 409 || response.status === 429 || response.status >= 500)
    return {
      outcome: "transient",
      reason,
      ...(answer.retryAfterMs ? { retryAfterMs: answer.retryAfterMs } : {}),
    };
  return { outcome: "permanent", reason };
}
