import { z } from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const argsSchema = z.object({
  sessionKey: z.string().trim().min(1),
  message: z.string().trim().min(1).max(20_000),
});

/**
 * `sessions_send` (OpenClaw concepts/session-tool): starts a turn in another session this one may
 * see, fire and forget (a Durable Object waits on no other: OpenClaw's `timeoutSeconds: 0`). The
 * target reads it as inter-session data (`isUser=false`) and answers in its own conversation.
 * Exactly once per tool call.
 */
export function createSessionsSendTool(host: SessionToolsHost): AgentTool {
  return {
    name: "sessions_send",
    description:
      "Send a message to another session you may see (sessions_list) to start a turn there; it answers in its own conversation. Fire and forget: this returns at once.",
    parameters: {
      type: "object",
      properties: {
        sessionKey: { type: "string" },
        message: { type: "string" },
      },
      required: ["sessionKey", "message"],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const parsed = parseToolArgs("sessions_send", argsSchema, args);
      if (!ctx.toolCallId) return { content: "sessions_send: no tool-call id", isError: true };
      const answer = await host.send(parsed.sessionKey, parsed.message, ctx.toolCallId);
      return answer.startsWith("{") ? { content: answer } : { content: answer, isError: true };
    },
  };
}
