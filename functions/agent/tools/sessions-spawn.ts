import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const TASK_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const RESERVED_TASK_NAMES = new Set(["last", "all"]);

const argsSchema = z
  .object({
    task: z.string().trim().min(1).max(20_000),
    label: z.string().trim().min(1).max(120).optional(),
    taskName: z
      .string()
      .regex(TASK_NAME, "expected [a-z][a-z0-9_-]{0,63}")
      .refine((name) => !RESERVED_TASK_NAMES.has(name), "last and all are reserved")
      .optional(),
    agentId: z.string().trim().min(1).optional(),
    model: z.string().trim().min(1).optional(),
    runTimeoutSeconds: z.number().int().nonnegative().optional(),
    context: z.enum(["isolated", "fork"]).optional(),
  })
  .loose();

/** Delivery parameters OpenClaw's sessions_spawn refuses: a child reports to its parent, never out. */
const DELIVERY_KEYS = ["target", "channel", "to", "threadId", "replyTo", "transport"];

/**
 * `sessions_spawn` (OpenClaw tools/subagents): starts a background child run in its own session
 * and returns at once with `{ status: "accepted", runId, childSessionKey }`. The child's result
 * comes back later as one event in this session (its completion announce); call sessions_yield
 * to end the turn until then. Keyed by the tool-call id: a resumed run asks for the same child.
 */
export function createSessionsSpawnTool(host: SessionToolsHost): AgentTool {
  return {
    name: "sessions_spawn",
    description:
      "Start a background sub-agent in its own isolated session for a self-contained task (research, long or slow tool work). Non-blocking: returns { status: 'accepted', runId, childSessionKey } at once; the child's result arrives later as a message in this session. Give the full task in `task` (the child does not see this conversation). After spawning the work you need, call sessions_yield instead of polling.",
    parameters: {
      type: "object",
      properties: {
        task: { type: "string", description: "What the sub-agent should do, self-contained." },
        label: { type: "string", description: "A short title shown in lists." },
        taskName: {
          type: "string",
          description: "Optional stable handle ([a-z][a-z0-9_-]{0,63}, not last/all).",
        },
        agentId: {
          type: "string",
          description: "Spawn under another configured agent, if allowed.",
        },
        model: { type: "string", description: "Model for the child (provider/model)." },
        runTimeoutSeconds: { type: "integer", minimum: 0, description: "0: no extra timeout." },
        context: {
          type: "string",
          enum: ["isolated", "fork"],
          description: "fork: the child also gets this conversation so far as background.",
        },
      },
      required: ["task"],
      additionalProperties: true,
    },
    async execute(args, ctx) {
      const delivery = DELIVERY_KEYS.filter((key) => key in args);
      if (delivery.length)
        return {
          content: `sessions_spawn takes no delivery parameters (${delivery.join(", ")}): a sub-agent reports to this session, and you decide what the user sees.`,
          isError: true,
        };
      const parsed = parseToolArgs("sessions_spawn", argsSchema, args);
      if (!ctx.toolCallId) return { content: "sessions_spawn: no tool-call id", isError: true };
      const answer = await host.spawn(
        {
          task: parsed.task,
          ...(parsed.label ? { label: parsed.label } : {}),
          ...(parsed.taskName ? { taskName: parsed.taskName } : {}),
          ...(parsed.agentId ? { agentId: parsed.agentId } : {}),
          ...(parsed.model ? { model: parsed.model } : {}),
          ...(parsed.context ? { context: parsed.context } : {}),
          ...(parsed.runTimeoutSeconds !== undefined
            ? { runTimeoutSeconds: parsed.runTimeoutSeconds }
            : {}),
        },
        ctx.toolCallId,
      );
      if (answer.status === "refused") return { content: JSON.stringify(answer), isError: true };
      return { content: JSON.stringify(answer) };
    },
  };
}
