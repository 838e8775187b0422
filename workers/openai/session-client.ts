import { z } from "zod";
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
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

export async function readHistory(env: Env, sessionKey: string): Promise<HistoryEntry[]> {
  return z.array(historyEntrySchema).parse(await sessionStub(env, sessionKey).history());
}
