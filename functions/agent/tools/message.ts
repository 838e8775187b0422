import { z } from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const argsSchema = z
  .object({
    action: z.literal("send").default("send"),
    sessionKey: z.string().trim().min(1),
    message: z.string().trim().min(1).max(20_000).optional(),
    text: z.string().trim().min(1).max(20_000).optional(),
  })
  .refine((args) => args.message ?? args.text, {
    message: "message (the text to send) is required",
  });

/**
 * `message` (OpenClaw's shared message tool), text only here: posts into another conversation
 * the agent may reach, named by its session key (sessions_list), through that session's outbox —
 * the same exactly-once delivery as a reply (durable-objects/session/subagents/message.ts). The
 * owner's tool; sub-agents never get it.
 */
export function createMessageTool(host: SessionToolsHost): AgentTool {
  return {
    name: "message",
    description:
      "Send a text message on your own into another conversation you may reach: give its sessionKey (from sessions_list) and the message. It goes out once, in that chat, as the assistant.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["send"] },
        sessionKey: {
          type: "string",
          description: "The conversation's session key (sessions_list).",
        },
        message: { type: "string", description: "The text to send." },
      },
      required: ["sessionKey", "message"],
      additionalProperties: false,
    },
    ownerOnly: true,
    async execute(args, ctx) {
      const parsed = parseToolArgs("message", argsSchema, args);
      if (!ctx.toolCallId) return { content: "message: no tool-call id", isError: true };
      const text = (parsed.message ?? parsed.text)!;
      const answer = await host.message(parsed.sessionKey, text, ctx.toolCallId);
      return answer.startsWith("{") ? { content: answer } : { content: answer, isError: true };
    },
  };
}
