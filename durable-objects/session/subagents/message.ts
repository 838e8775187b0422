import type { MessageRequest } from "../../../functions/agent/tools/session-tools-host.ts";
import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { channelAccount } from "../../../functions/channels/channel-account.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import { enqueueFiles, enqueueReply } from "../outbox/replies.ts";
import { scheduleAlarm } from "../schedule.ts";
import type { SessionState } from "../state.ts";
import { resolveMessageTarget, stageMessageFiles } from "./message-target.ts";
import { reachableSession } from "./sessions.ts";
import type { PostAnswer, PostedMessage } from "./shapes.ts";
import type { Spawner } from "./spawn.ts";
import { lastRoute } from "../last-inbound.ts";

/**
 * The `message` tool: a proactive send into another conversation the agent may reach, sent by the
 * TARGET session's outbox (so it goes out in order with that conversation's replies, retried,
 * reconciled, dead-lettered like them). Exactly once: the outbox rows' ids are the sending run and
 * tool call (`message:<from>:<run>:<call>`, then `:<chunk>` / `:file:<n>`), stored INSERT OR
 * IGNORE in one transaction, so a resumed run that asks again queues nothing new, and the outbox
 * never sends a stored row twice. Who may be reached is `tools.message.targets`: the owner's own
 * direct chats (the default), or every session the caller can see (sessions.ts: visibility and
 * privacy). The tool itself is the owner's.
 */
export async function sendMessageTo(
  s: SessionState,
  caller: Spawner,
  request: MessageRequest,
  toolCallId: string,
): Promise<string> {
  const ownKey = s.store.meta.get("sessionKey") ?? "";
  const resolved = await resolveMessageTarget(s, request).catch((error: unknown) => ({
    error: `message: the sessions index is unavailable (${describeError(error)})`,
  }));
  if ("error" in resolved) return resolved.error;
  const { sessionKey } = resolved;
  if (sessionKey === ownKey) return "message: that is this conversation — answer in your reply";
  const ownerOnly = s.config.tools.message.targets === "owner";
  if (!ownerOnly && !(await reachableSession(s, caller, sessionKey)))
    return `session ${sessionKey} does not exist or is not visible from here (tools.sessions.visibility)`;
  const files = await stageMessageFiles(s, caller, request.files, toolCallId);
  if ("error" in files) return files.error;
  const message: PostedMessage = {
    id: `message:${ownKey}:${caller.runId}:${toolCallId}`,
    ...(request.text ? { text: request.text } : {}),
    ...(files.length ? { files } : {}),
    ...(ownerOnly ? { ownerOnly } : {}),
    ...(resolved.channel ? { channel: resolved.channel } : {}),
  };
  // A target that died after recording the send but before answering is asked once more: the
  // same ids record nothing new, and its answer re-arms its outbox.
  let failure: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const stub = s.env.SESSIONS.get(s.env.SESSIONS.idFromName(sessionKey));
      const answer = await stub.postMessage(message);
      return answer.ok
        ? JSON.stringify({
            status: "queued",
            sessionKey,
            channel: answer.channel,
            ...(files.length ? { files: files.map((file) => file.name) } : {}),
          })
        : answer.error;
    } catch (error) {
      failure = error;
    }
  }
  return `message failed: ${describeError(failure)}`;
}

/** Target side: the text and files go into this session's outbox, to its last route, once. */
export async function postMessageHere(
  s: SessionState,
  message: PostedMessage,
): Promise<PostAnswer> {
  const route = lastRoute(s.store);
  if (!route || HTTP_CHANNELS.has(route.channel))
    return {
      ok: false,
      error:
        "this session has no chat conversation to post to (no channel route yet, or the API / web chat)",
    };
  if (message.channel && route.channel !== message.channel)
    return {
      ok: false,
      error: `this conversation is now on ${route.channel}, not ${message.channel}`,
    };
  if (message.ownerOnly && !isOwnerConversation(s, route))
    return {
      ok: false,
      error:
        "not the owner's direct chat: the message tool reaches only the owner's own conversations unless tools.message.targets is \"visible\"",
    };
  const files = message.files ?? [];
  if (files.length) {
    const adapter = adapterFor(route.channel);
    if (!adapter?.sendFile)
      return { ok: false, error: `this channel (${route.channel}) cannot send files` };
    const account = channelAccount(s.config, route.channel, route.accountId);
    const limit = adapter.maxFileBytes?.(account);
    const big = files.find((file) => limit !== undefined && file.sizeBytes > limit);
    if (big)
      return {
        ok: false,
        error: `${big.name}: ${big.sizeBytes} bytes is over this channel's ${limit}`,
      };
    // What the channel cannot take at all (a type it refuses, no public link to hand it).
    for (const file of files) {
      const refusal = adapter.fileRefusal?.(file, {
        env: s.env as unknown as Record<string, unknown>,
        config: s.config,
        account,
      });
      if (refusal) return { ok: false, error: `${file.name}: ${refusal}` };
    }
  }
  const now = Date.now();
  // The route's reply-to and per-message extras belong to the last inbound message, not to this.
  const { replyToMessageId: _reply, ...target } = route;
  s.ctx.storage.transactionSync(() => {
    if (message.text) enqueueReply(s, message.id, null, target, message.text, now);
    if (files.length) enqueueFiles(s, message.id, null, target, files, now);
  });
  await scheduleAlarm(s);
  return { ok: true, channel: route.channel };
}

/**
 * A direct chat whose last turn was the owner's: the owner's own conversation on that channel.
 * (The run that answered the route's last message knows whether its sender was the owner.)
 */
function isOwnerConversation(s: SessionState, route: { channel: string; to: string }): boolean {
  if (s.store.meta.get("chatType") !== "direct") return false;
  const last = s.store.runs.latestOn(route.channel, route.to);
  return last?.options.senderIsOwner === true;
}
