import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import { sandboxConfigFor } from "../../sandbox/placement.ts";
import { SandboxError } from "../../sandbox/backend.ts";
import type { ExecView } from "../../sandbox/exec-host.ts";
import { ToolInputError, parseToolArgs } from "./common.ts";
import { formatExecView } from "./exec.ts";

/**
 * `process` (gateway__background-process.md): the session's background commands — list, poll
 * (new output and the exit; `timeout` waits up to 30 s), log (line-based offset/limit, the last
 * 200 lines by default), write (stdin, optional eof), send-keys / submit / paste (bytes to stdin:
 * this sandbox has no pty, so keys are sent as their control bytes), kill, clear (forget a finished
 * one), remove (kill if running, then forget). It sees only this session's commands.
 */
const KEYS: Record<string, string> = {
  Enter: "\r",
  Tab: "\t",
  Escape: "\u001b",
  Space: " ",
  BSpace: "\u007f",
  Up: "\u001b[A",
  Down: "\u001b[B",
  Right: "\u001b[C",
  Left: "\u001b[D",
};

const id = z.string().min(1);
const argsSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("list") }),
  z.object({
    action: z.literal("poll"),
    sessionId: id,
    timeout: z.number().int().nonnegative().optional(),
  }),
  z.object({
    action: z.literal("log"),
    sessionId: id,
    offset: z.number().int().nonnegative().optional(),
    limit: z.number().int().positive().optional(),
  }),
  z.object({
    action: z.literal("write"),
    sessionId: id,
    data: z.string(),
    eof: z.boolean().optional(),
  }),
  z.object({ action: z.literal("send-keys"), sessionId: id, keys: z.array(z.string()).min(1) }),
  z.object({ action: z.literal("submit"), sessionId: id }),
  z.object({
    action: z.literal("paste"),
    sessionId: id,
    text: z.string(),
    bracketed: z.boolean().optional(),
  }),
  z.object({ action: z.literal("kill"), sessionId: id }),
  z.object({ action: z.literal("clear"), sessionId: id }),
  z.object({ action: z.literal("remove"), sessionId: id }),
]);

export function createProcessTool(config: EdgeclawConfig, agentId: string): AgentTool | null {
  if (!sandboxConfigFor(config, agentId).backend) return null;
  return {
    name: "process",
    ownerOnly: !config.tools.exec.allowNonOwners,
    description:
      "Manage this session's background exec commands by the id exec returned (sessionId): list, poll (new output and exit status; timeout ms waits up to 30000), log (offset/limit lines), write (stdin data, eof), send-keys (keys like Enter, C-c, Up), submit, paste (text), kill, clear (forget a finished one), remove. Poll on demand, not in a loop: the end of a background command is reported to you.",
    parameters: {
      type: "object",
      properties: {
        action: {
          type: "string",
          enum: [
            "list",
            "poll",
            "log",
            "write",
            "send-keys",
            "submit",
            "paste",
            "kill",
            "clear",
            "remove",
          ],
        },
        sessionId: { type: "string", description: "The id exec returned" },
        timeout: { type: "number", description: "poll: wait up to this many ms (max 30000)" },
        offset: { type: "number" },
        limit: { type: "number" },
        data: { type: "string" },
        eof: { type: "boolean" },
        keys: { type: "array", items: { type: "string" } },
        text: { type: "string" },
        bracketed: { type: "boolean" },
      },
      required: ["action"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("process", argsSchema, rawArgs);
      const host = ctx.exec;
      if (!host)
        throw new ToolInputError(
          "process: this session has no sandbox (agents.defaults.sandbox.backend)",
        );
      const missing = (sessionId: string) =>
        new ToolInputError(
          `process: no command with id ${sessionId} in this session (process list shows them)`,
        );
      const show = (view: ExecView | undefined, sessionId: string) => {
        if (!view) throw missing(sessionId);
        return formatExecView(view);
      };
      try {
        switch (args.action) {
          case "list": {
            const views = await host.list();
            if (!views.length) return { content: "No commands in this session." };
            return {
              content: views
                .map(
                  (view) =>
                    `${view.id}  ${view.state}${view.exitCode !== null ? ` (exit ${view.exitCode})` : ""}  ${nameOf(view.command)}`,
                )
                .join("\n"),
            };
          }
          case "poll":
            return show(
              await host.poll(args.sessionId, Math.min(30_000, args.timeout ?? 0)),
              args.sessionId,
            );
          case "log": {
            const log = await host.log(args.sessionId, args.offset, args.limit);
            if (!log) throw missing(args.sessionId);
            const end = log.offset + log.lines.length;
            const more = end < log.totalLines ? ` Call log with offset=${end} to continue.` : "";
            return {
              content: `${log.lines.join("\n")}\n\n[lines ${log.offset + 1}-${end} of ${log.totalLines}; ${log.state}${log.exitCode !== null ? `, exit ${log.exitCode}` : ""}.${more}]`,
            };
          }
          case "write":
            return show(
              await host.write(args.sessionId, args.data, args.eof ?? false),
              args.sessionId,
            );
          case "send-keys":
            return show(
              await host.write(args.sessionId, args.keys.map(keyBytes).join(""), false),
              args.sessionId,
            );
          case "submit":
            return show(await host.write(args.sessionId, "\r", false), args.sessionId);
          case "paste": {
            const text =
              args.bracketed === false ? args.text : `\u001b[200~${args.text}\u001b[201~`;
            return show(await host.write(args.sessionId, text, false), args.sessionId);
          }
          case "kill":
            return show(await host.kill(args.sessionId), args.sessionId);
          case "clear":
          case "remove": {
            const outcome = await host.clear(args.sessionId, args.action === "remove");
            if (outcome === "missing") throw missing(args.sessionId);
            if (outcome === "running")
              throw new ToolInputError(
                `process: ${args.sessionId} is still running; kill it or use remove`,
              );
            return { content: `Removed ${args.sessionId}.` };
          }
        }
      } catch (error) {
        if (error instanceof SandboxError)
          return { content: `process: ${error.message}`, isError: true };
        throw error;
      }
    },
  };
}

/** `C-c` → ETX, named keys → their sequences, anything else as typed. */
function keyBytes(key: string): string {
  const ctrl = /^C-([a-z])$/i.exec(key);
  if (ctrl) return String.fromCharCode(ctrl[1]!.toUpperCase().charCodeAt(0) - 64);
  return KEYS[key] ?? key;
}

/** OpenClaw's derived name: the command verb and its first target. */
function nameOf(command: string): string {
  const words = command.trim().split(/\s+/).slice(0, 2).join(" ");
  return words.length > 60 ? `${words.slice(0, 57)}…` : words;
}
