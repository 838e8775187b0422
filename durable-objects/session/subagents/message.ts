import { HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import { enqueueReply } from "../outbox/replies.ts";
import { scheduleAlarm } from "../schedule.ts";
import type { SessionState } from "../state.ts";
import { reachableSession } from "./sessions.ts";
import type { Spawner } from "./spawn.ts";

/**
 * The `message` tool: a proactive text into another conversation the agent may reach, sent by the
 * TARGET session's outbox (so it goes out in order with that conversation's replies, retried,
 * reconciled, dead-lettered like them). Exactly once: the outbox row's id is the sending run and
 * tool call (`message:<from>:<run>:<call>`), stored INSERT OR IGNORE, so a resumed run that asks
 * again queues nothing new, and the outbox never sends a stored chunk twice. Only sessions the
 * caller can see (sessions.ts: visibility and privacy) are targets; the tool itself is the owner's.
 */
export async function sendMessageTo(
  s: SessionState,
  caller: Spawner,
  sessionKey: string,
  text: string,
  toolCallId: string,
): Promise<string> {
  const ownKey = s.store.meta.get("sessionKey") ?? "";
  if (!(await reachableSession(s, caller, sessionKey)))
    return `session ${sessionKey} does not exist or is not visible from here (tools.sessions.visibility)`;
  try {
    const answer = await s.env.SESSIONS.get(s.env.SESSIONS.idFromName(sessionKey)).postMessage({
      id: `message:${ownKey}:${caller.runId}:${toolCallId}`,
      text,
    });
    return answer.ok
      ? JSON.stringify({ status: "queued", sessionKey, channel: answer.channel })
      : answer.error;
  } catch (error) {
    return `message failed: ${describeError(error)}`;
  }
}

/** Target side: the text goes into this session's outbox, to its last route. */
export async function postMessageHere(
  s: SessionState,
  message: { id: string; text: string },
): Promise<{ ok: true; channel: string } | { ok: false; error: string }> {
  const route = s.store.meta.getJson("lastRoute");
  if (!route || HTTP_CHANNELS.has(route.channel))
    return {
      ok: false,
      error:
        "this session has no chat conversation to post to (no channel route yet, or the API / web chat)",
    };
  const now = Date.now();
  // The route's reply-to and per-message extras belong to the last inbound message, not to this.
  const { replyToMessageId: _reply, ...target } = route;
  s.ctx.storage.transactionSync(() => enqueueReply(s, message.id, null, target, message.text, now));
  await scheduleAlarm(s);
  return { ok: true, channel: route.channel };
}
