import * as z from "zod";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import type { Env } from "../env.ts";

/**
 * The two SessionDO RPC methods the HTTP API uses. `chat` stores the event durably (idempotent by
 * its dedup key) and streams NDJSON RunEvents until the run answering it ends; `history` returns
 * the session's visible transcript for the web chat.
 */
export interface SessionChatApi {
  chat(event: RoutedEvent): Promise<ReadableStream<Uint8Array>>;
  history(): Promise<unknown>;
}

export function sessionStub(env: Env, sessionKey: string): SessionChatApi {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionKey));
}

export const historyEntrySchema = z.object({
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  at: z.number(),
  /** Said in place of an answer (display-log.ts): the page shows it as a notice. */
  notice: z.literal(true).optional(),
  /** The model that answered (`provider/model`), so a reloaded page keeps its label. */
  model: z.string().optional(),
  /** Files of the turn as signed same-origin links (durable-objects/session/run/web-files.ts). */
  media: z
    .array(
      z.object({ url: z.string().startsWith("/media/"), name: z.string(), mimeType: z.string() }),
    )
    .optional(),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

export async function readHistory(env: Env, sessionKey: string): Promise<HistoryEntry[]> {
  return z.array(historyEntrySchema).parse(await sessionStub(env, sessionKey).history());
}
