import { HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { sendDecision, type SendDecision } from "../../../functions/routing/send-policy.ts";
import { settings } from "../settings.ts";
import type { SessionState } from "../state.ts";

/**
 * Whether this session's replies, previews and typing may reach `route`'s chat (session.sendPolicy,
 * /send). A request/response channel (the OpenAI-compatible API, the web chat) always gets its
 * answer: the caller is waiting on the request.
 */
export function sessionSendDecision(
  s: SessionState,
  route: Pick<ReplyRoute, "channel">,
): SendDecision {
  if (HTTP_CHANNELS.has(route.channel)) return { allowed: true };
  return sendDecision(
    s.config,
    {
      sessionKey: s.store.meta.get("sessionKey") ?? "",
      channel: route.channel,
      chatType: s.store.meta.get("chatType") ?? undefined,
    },
    settings(s).sendPolicy,
  );
}
