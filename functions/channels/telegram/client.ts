import * as z from "zod";
import { botApiUrl } from "./config.ts";

/**
 * One Bot API call: `POST <apiRoot>/bot<token>/<method>` with a JSON body; Telegram answers
 * `{ ok: true, result }` or `{ ok: false, error_code, description, parameters? }`
 * (https://core.telegram.org/bots/api#making-requests). No retries here: the outbox owns them.
 * A call that may have reached Telegram but whose answer was lost (network error, unreadable
 * answer) is `lost`; the caller must not treat it as "did not happen".
 */
export type BotApiResult<T> =
  | { ok: true; result: T }
  | {
      ok: false;
      kind: "refused";
      status: number;
      errorCode: number;
      description: string;
      retryAfterSeconds?: number;
      migrateToChatId?: number;
    }
  | { ok: false; kind: "lost"; error: string };

const errorSchema = z
  .object({
    ok: z.literal(false),
    error_code: z.number().int().optional(),
    description: z.string().default(""),
    parameters: z
      .object({ retry_after: z.number().optional(), migrate_to_chat_id: z.number().optional() })
      .loose()
      .optional(),
  })
  .loose();

export async function callBotApi<T = unknown>(
  apiRoot: string,
  botToken: string,
  method: string,
  /** JSON parameters, or a multipart form for an upload (sendDocument, sendPhoto, sendVoice). */
  params: Record<string, unknown> | FormData,
  signal?: AbortSignal,
): Promise<BotApiResult<T>> {
  let response: Response;
  try {
    const form = params instanceof FormData;
    response = await fetch(botApiUrl(apiRoot, botToken, method), {
      method: "POST",
      // A form sets its own multipart content type with the boundary.
      ...(form ? {} : { headers: { "content-type": "application/json" } }),
      body: form ? params : JSON.stringify(params),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    return {
      ok: false,
      kind: "lost",
      error: `${method}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    // A proxy's error page: for 5xx nothing was done; a 2xx we cannot read may have been applied.
    if (response.status >= 500 || response.status === 429) {
      return {
        ok: false,
        kind: "refused",
        status: response.status,
        errorCode: response.status,
        description: `HTTP ${response.status}`,
      };
    }
    return {
      ok: false,
      kind: "lost",
      error: `${method}: unreadable answer (HTTP ${response.status})`,
    };
  }
  if (typeof body === "object" && body !== null && (body as { ok?: unknown }).ok === true) {
    return { ok: true, result: (body as { result: T }).result };
  }
  const parsed = errorSchema.safeParse(body);
  const error = parsed.success
    ? parsed.data
    : {
        error_code: response.status,
        description: `HTTP ${response.status}`,
        parameters: undefined,
      };
  return {
    ok: false,
    kind: "refused",
    status: response.status,
    errorCode: error.error_code ?? response.status,
    description: error.description,
    ...(error.parameters?.retry_after !== undefined
      ? { retryAfterSeconds: error.parameters.retry_after }
      : {}),
    ...(error.parameters?.migrate_to_chat_id !== undefined
      ? { migrateToChatId: error.parameters.migrate_to_chat_id }
      : {}),
  };
}

/** Telegram's answer when HTML markup does not parse: the text goes again as plain text. */
export function isEntityParseError(
  failure: Extract<BotApiResult<unknown>, { ok: false }>,
): boolean {
  return (
    failure.kind === "refused" &&
    failure.errorCode === 400 &&
    /can't parse entities/i.test(failure.description)
  );
}

/** An edit to the text the message already has: the edit is done. */
export function isNotModified(failure: Extract<BotApiResult<unknown>, { ok: false }>): boolean {
  return (
    failure.kind === "refused" &&
    failure.errorCode === 400 &&
    /message is not modified/i.test(failure.description)
  );
}
