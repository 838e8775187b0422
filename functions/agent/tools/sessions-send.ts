import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const argsSchema = z.object({
  sessionKey: z.string().trim().min(1),
  message: z.string().trim().min(1).max(20_000),
  /** OpenClaw's: 0 = fire and forget; more = wait that long for the reply (capped here at 300). */
  timeoutSeconds: z.number().int().min(0).max(300).default(30),
});

/**
 * `sessions_send` (OpenClaw concepts/session-tool): starts a turn in another session this one may
 * see, and waits up to `timeoutSeconds` (default 30) for its reply, returned inline; 0 is fire and
 * forget. The target reads it as inter-session data (`isUser=false`) and answers in its own
 * conversation. Exactly once per tool call: a resumed run asks again, stores nothing new, and
 * waits for the same reply.
 */
export function createSessionsSendTool(host: SessionToolsHost): AgentTool {
  return {
    name: "sessions_send",
    description:
      "Send a message to another session you may see (sessions_list) to start a turn there, and wait up to timeoutSeconds (default 30) for its reply; 0 returns at once without waiting. On a timeout the reply still comes, in that session.",
    parameters: {
      type: "object",
      properties: {
        sessionKey: { type: "string" },
        message: { type: "string" },
        timeoutSeconds: {
          type: "integer",
          description: "Seconds to wait for the reply (0: do not wait; at most 300).",
        },
      },
      required: ["sessionKey", "message"],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const parsed = parseToolArgs("sessions_send", argsSchema, args);
      if (!ctx.toolCallId) return { content: "sessions_send: no tool-call id", isError: true };
      const answer = await host.send(
        parsed.sessionKey,
        parsed.message,
        ctx.toolCallId,
        parsed.timeoutSeconds,
      );
      return answer.startsWith("{") ? { content: answer } : { content: answer, isError: true };
    },
  };
}
