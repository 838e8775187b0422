import type { ChatType } from "../core/envelope.ts";

/**
 * OpenClaw loads MEMORY.md only in the main private session: the owner talking to the agent in a
 * direct chat (their DM on a channel, the web chat, the CLI / OpenAI API, which the gateway token
 * makes the operator). Never in groups or channels (even when the owner speaks there), never in the
 * DM of any other sender (whatever dmScope shares), and never when the chat type is not known.
 */
export function isMainPrivateSession(facts: {
  chatType: ChatType | undefined;
  senderIsOwner: boolean;
}): boolean {
  return facts.chatType === "direct" && facts.senderIsOwner;
}
