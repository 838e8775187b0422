import type { EdgeclawConfig } from "../config/schema.ts";
import type { ReplyRoute } from "../core/envelope.ts";

/** Who sent a command, where, and what it answers. */
export interface CommandContext {
  config: EdgeclawConfig;
  agentId: string;
  sessionKey: string;
  sender: {
    channel: string;
    accountId: string;
    senderId: string;
    senderName?: string;
    chatType: string;
  };
  senderIsOwner: boolean;
  now: number;
  /** Where the command came from: a conversation's tool policy depends on it (/tools). */
  route?: ReplyRoute;
}

export interface CommandResult {
  reply?: string;
  /** Text that must still go to the model after the command (`/new hello`, `/reset soft hi`). */
  forwardText?: string;
}
