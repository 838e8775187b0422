import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";
import { MAX_FILES_PER_REPLY } from "../../media/outbound.ts";

const text = z.string().trim().min(1).max(20_000);
const path = z.string().trim().min(1).max(500);

const argsSchema = z
  .object({
    action: z.literal("send").default("send"),
    channel: z.string().trim().toLowerCase().min(1).optional(),
    target: z.string().trim().min(1).max(300).optional(),
    /** OpenClaw's CLI spells the target `--target`; `to` is the delivery blocks' name for it. */
    to: z.string().trim().min(1).max(300).optional(),
    accountId: z.string().trim().min(1).optional(),
    sessionKey: z.string().trim().min(1).optional(),
    message: text.optional(),
    text: text.optional(),
    media: z.union([path, z.array(path).max(MAX_FILES_PER_REPLY)]).optional(),
    path: path.optional(),
    filePath: path.optional(),
    mediaUrl: z.string().optional(),
    mediaUrls: z.array(z.string()).optional(),
  })
  .refine((args) => args.sessionKey ?? args.target ?? args.to, {
    message: "a target is required: channel + target, or the conversation's sessionKey",
  });

/**
 * `message` (OpenClaw's shared message tool), action `send`: text and workspace files posted on
 * the agent's own initiative into a conversation it may reach — named as OpenClaw names it
 * (`channel` + a raw `target`, message-targets.ts) or by its session key (sessions_list) — and
 * sent by that conversation's own outbox, exactly once (durable-objects/session/subagents/
 * message.ts). Who may be reached is `tools.message.targets` (by default the owner's own direct
 * chats). The owner's tool; sub-agents never get it.
 */
export function createMessageTool(host: SessionToolsHost): AgentTool {
  return {
    name: "message",
    description:
      "Send a message on your own into a conversation you may reach: give channel and target (user:<id>, channel:<id>, a chat id) or its sessionKey (sessions_list), the message text and/or a workspace file (media). It goes out once, in that chat, as the assistant.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["send"] },
        channel: { type: "string", description: "The channel: telegram, slack, discord, …" },
        target: {
          type: "string",
          description:
            "The conversation on that channel: user:<id>, channel:<id>, a chat id, spaces/<id> …",
        },
        accountId: { type: "string", description: "The channel account (default: any)." },
        sessionKey: {
          type: "string",
          description: "Instead of channel + target: the conversation's session key.",
        },
        message: { type: "string", description: "The text to send." },
        media: {
          description: "Workspace file path(s) to send after the text.",
          anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
        },
      },
      additionalProperties: false,
    },
    ownerOnly: true,
    async execute(args, ctx) {
      const parsed = parseToolArgs("message", argsSchema, args);
      if (!ctx.toolCallId) return { content: "message: no tool-call id", isError: true };
      if (parsed.mediaUrl || parsed.mediaUrls?.length)
        return {
          content: "message: only workspace files are sent (media: <path>), never a URL",
          isError: true,
        };
      const files = [
        ...(Array.isArray(parsed.media) ? parsed.media : parsed.media ? [parsed.media] : []),
        ...(parsed.path ? [parsed.path] : []),
        ...(parsed.filePath ? [parsed.filePath] : []),
      ];
      const body = parsed.message ?? parsed.text;
      if (!body && !files.length)
        return {
          content: "message: give the message text, a file (media), or both",
          isError: true,
        };
      if (files.length > MAX_FILES_PER_REPLY)
        return {
          content: `message: at most ${MAX_FILES_PER_REPLY} files per message`,
          isError: true,
        };
      const target = parsed.target ?? parsed.to;
      if (target && !parsed.sessionKey && !parsed.channel && !/^[a-z][a-z0-9_-]*:/.test(target))
        return { content: "message: name the channel of that target", isError: true };
      const answer = await host.message(
        {
          ...(parsed.sessionKey ? { sessionKey: parsed.sessionKey } : {}),
          ...(parsed.channel ? { channel: parsed.channel } : {}),
          ...(target ? { target } : {}),
          ...(parsed.accountId ? { accountId: parsed.accountId } : {}),
          ...(body ? { text: body } : {}),
          files,
        },
        ctx.toolCallId,
      );
      return answer.startsWith("{") ? { content: answer } : { content: answer, isError: true };
    },
  };
}
