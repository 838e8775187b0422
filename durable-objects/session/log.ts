import { createLogger, type Logger } from "../../functions/logging/logger.ts";
import type { SessionState } from "./state.ts";

/**
 * The session's structured logger: every line carries the session key (and the run id when there
 * is one), and the text of the events it is about is masked wherever it turns up — an error that
 * quotes the user's message does not leak it into the logs (logging.redactSensitive).
 */
export function sessionLog(
  s: SessionState,
  context: { runId?: string; seqs?: Iterable<number> } = {},
): Logger {
  const texts: string[] = [];
  for (const seq of context.seqs ?? []) {
    const text = s.store.inbox.bySeq(seq)?.event.envelope?.text;
    if (text) texts.push(text);
  }
  const sessionKey = s.store.meta.get("sessionKey");
  return createLogger(
    s.config,
    s.env as Record<string, unknown>,
    {
      ...(sessionKey ? { sessionKey } : {}),
      ...(context.runId ? { runId: context.runId } : {}),
    },
    texts,
  );
}
