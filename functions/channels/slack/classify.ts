import * as z from "zod";
import {
  slackAppRateLimitedSchema,
  slackEventCallbackSchema,
  slackInteractionSchema,
  slackSlashCommandSchema,
  slackUrlVerificationSchema,
  type SlackEventCallback,
  type SlackInteraction,
  type SlackSlashCommand,
} from "./payloads.ts";
import { firstIssue, readUtf8Body } from "../parse-json-body.ts";

/**
 * Which kind of Slack request a verified body is, before any envelope is built: kept apart from
 * the envelope builders (parse.ts, system-events.ts) because the Request URL and Socket Mode
 * (socket.ts) both classify, each from its own framing, and only then hand over to the builders.
 */

/**
 * What a verified Slack request is, by body shape (one Request URL serves everything): Events API
 * JSON (`url_verification`, `event_callback`, `app_rate_limited`), a slash-command form, an
 * interactivity form (`payload=<json>`) or the slash-command `ssl_check`.
 */
export type SlackRequest =
  | { kind: "url_verification"; challenge: string }
  | { kind: "ssl_check" }
  | { kind: "app_rate_limited" }
  | { kind: "event"; callback: SlackEventCallback }
  | { kind: "slash"; command: SlackSlashCommand }
  | { kind: "interaction"; interaction: SlackInteraction }
  | { kind: "malformed"; reason: string };

export function classifySlackRequest(
  rawBody: Uint8Array,
  contentType: string | null,
): SlackRequest {
  const body = readUtf8Body(rawBody);
  if (!body.ok) return { kind: "malformed", reason: body.reason };
  const text = body.value;
  if ((contentType ?? "").toLowerCase().includes("application/x-www-form-urlencoded"))
    return classifyForm(new URLSearchParams(text));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "malformed", reason: "body is neither JSON nor a form" };
  }
  return classifySlackEventsBody(json);
}

/** An Events API body, already JSON (a Request URL body, or a Socket Mode `events_api` envelope's payload). */
export function classifySlackEventsBody(json: unknown): SlackRequest {
  const type = z.object({ type: z.string() }).loose().safeParse(json);
  if (!type.success) return { kind: "malformed", reason: "JSON body without a type" };
  switch (type.data.type) {
    case "url_verification": {
      const parsed = slackUrlVerificationSchema.safeParse(json);
      return parsed.success
        ? { kind: "url_verification", challenge: parsed.data.challenge }
        : malformed(parsed.error);
    }
    case "app_rate_limited":
      return slackAppRateLimitedSchema.safeParse(json).success
        ? { kind: "app_rate_limited" }
        : { kind: "malformed", reason: "bad app_rate_limited" };
    case "event_callback": {
      const parsed = slackEventCallbackSchema.safeParse(json);
      return parsed.success ? { kind: "event", callback: parsed.data } : malformed(parsed.error);
    }
    default:
      return {
        kind: "malformed",
        reason: `unknown request type ${JSON.stringify(type.data.type).slice(0, 60)}`,
      };
  }
}

function classifyForm(form: URLSearchParams): SlackRequest {
  if (form.get("ssl_check") === "1") return { kind: "ssl_check" };
  const payload = form.get("payload");
  if (payload !== null) {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return { kind: "malformed", reason: "payload= is not JSON" };
    }
    return classifySlackInteraction(json);
  }
  if (form.has("command")) return classifySlackSlashCommand(Object.fromEntries(form));
  return { kind: "malformed", reason: "form body is neither a command nor an interaction" };
}

/** An interactivity payload (the form's `payload=` JSON, or a Socket Mode `interactive` envelope's payload). */
export function classifySlackInteraction(json: unknown): SlackRequest {
  const parsed = slackInteractionSchema.safeParse(json);
  return parsed.success
    ? { kind: "interaction", interaction: parsed.data }
    : malformed(parsed.error);
}

/** Slash-command fields (the form, or a Socket Mode `slash_commands` envelope's payload: the same fields as JSON). */
export function classifySlackSlashCommand(fields: unknown): SlackRequest {
  const parsed = slackSlashCommandSchema.safeParse(fields);
  return parsed.success ? { kind: "slash", command: parsed.data } : malformed(parsed.error);
}

function malformed(error: z.ZodError): SlackRequest {
  return { kind: "malformed", reason: firstIssue(error) };
}
