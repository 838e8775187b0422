import { formatStatus } from "./format-status.ts";
import { formatSpend, parseUsageArgs } from "./usage.ts";
import { isModelToken, resolveModelPick } from "./models.ts";
import { applyDirectives, type RunOverrides } from "./directives.ts";
import { parseCommandMessage, type ParsedCommand, type ParsedDirective } from "./parse.ts";
import { COMMANDS } from "./registry.ts";
import { skillCommand, toolsCommand } from "./tools-skills.ts";
import { contextCommand } from "./context-command.ts";
import { modelsCommand } from "./models-list.ts";
import { sendCommand } from "./send-command.ts";
import { subagentsCommand } from "./subagents-command.ts";
import type { SessionControl } from "./session-control.ts";
import type { CommandContext, CommandResult } from "./context.ts";

export type { CommandContext, CommandResult } from "./context.ts";
export type { RunOverrides } from "./directives.ts";

/**
 * executeCommand(cmd, session, ctx) runs one parsed command against SessionControl and returns the
 * reply; applyDirectives(...) applies directives (persisted or one-shot); handleCommandMessage(...)
 * is the whole fast path for one inbound text. None of them calls a model.
 */
export async function executeCommand(
  cmd: ParsedCommand,
  session: SessionControl,
  ctx: CommandContext,
): Promise<CommandResult> {
  switch (cmd.name) {
    case "new":
      return commandNew(cmd.args, session, ctx);
    case "reset": {
      const [first, ...rest] = cmd.args.split(/\s+/).filter(Boolean);
      const soft = first?.toLowerCase() === "soft";
      await session.reset({ soft });
      const forward = (soft ? rest : cmd.args ? cmd.args.split(/\s+/) : []).join(" ").trim();
      return {
        reply: soft ? "✅ Session reset (soft: transcript kept)." : "✅ Session reset.",
        forwardText: forward || undefined,
      };
    }
    case "stop": {
      const stopped = await session.stop();
      const killed = stopped.killedCommands ?? 0;
      if (!stopped.abortedRun && stopped.cancelledQueued === 0 && killed === 0)
        return { reply: "Nothing is running." };
      const parts = [stopped.abortedRun ? "⏹️ Stopped the current run." : "⏹️ No run was active."];
      if (stopped.cancelledQueued > 0)
        parts.push(
          `Cancelled ${stopped.cancelledQueued} queued message${stopped.cancelledQueued === 1 ? "" : "s"}.`,
        );
      if (killed > 0)
        parts.push(`Killed ${killed} command${killed === 1 ? "" : "s"} in the sandbox.`);
      return { reply: parts.join(" ") };
    }
    case "compact": {
      const result = await session.compact(cmd.args || undefined);
      if (!result.compacted)
        return { reply: `Nothing compacted${result.reason ? `: ${result.reason}` : "."}` };
      const sizes =
        result.tokensBefore !== undefined && result.tokensAfter !== undefined
          ? ` (${result.tokensBefore} → ${result.tokensAfter} tokens)`
          : "";
      return {
        reply: `🧹 Compacted the session context${sizes}.${result.note ? ` Note: ${result.note}.` : ""}`,
      };
    }
    case "approve":
      return { reply: await approveCommand(cmd.args, session, ctx) };
    case "status":
      return { reply: formatStatus(await session.status(), ctx.now) };
    case "help":
      return { reply: helpText() };
    case "commands":
      return { reply: commandsText() };
    case "whoami":
      return { reply: whoamiText(ctx) };
    case "usage":
      return { reply: await usageCommand(cmd.args, session) };
    case "env":
      return { reply: await session.computeEnv(ctx.agentId, cmd.args) };
    case "tools":
      return toolsCommand(cmd.args, session, ctx);
    case "export-session":
      return {
        reply: ctx.senderIsOwner
          ? await session.exportSession({
              agentId: ctx.agentId,
              senderIsOwner: true,
              ...(cmd.args.trim() ? { path: cmd.args.trim() } : {}),
            })
          : "Only the owner can export a session (commands.ownerAllowFrom); nothing was written.",
      };
    case "send":
      return { reply: await sendCommand(cmd.args, session, ctx.senderIsOwner) };
    case "context":
      return contextCommand(cmd.args, session, ctx);
    case "models":
      return { reply: modelsCommand(cmd.args, ctx.config, (await session.status()).model) };
    case "skill":
      return skillCommand(cmd.args, session, ctx);
    case "subagents":
      return { reply: await subagentsCommand(cmd.args, session) };
    default: {
      // Directive names used as commands (e.g. parsed by a native command surface).
      const directive = {
        name: cmd.name as ParsedDirective["name"],
        args: cmd.args.split(/\s+/).filter(Boolean),
      };
      const applied = await applyDirectives([directive], session, ctx, { persist: true });
      return { reply: applied.replies.join("\n") };
    }
  }
}

async function commandNew(
  args: string,
  session: SessionControl,
  ctx: CommandContext,
): Promise<CommandResult> {
  const [first, ...rest] = args.split(/\s+/).filter(Boolean);
  const pick = first ? resolveModelPick(ctx.config, first) : undefined;
  if (pick?.ok) {
    await session.newSession({ model: pick.ref });
    return {
      reply: `✅ New session started · model ${pick.ref}.`,
      forwardText: rest.join(" ") || undefined,
    };
  }
  await session.newSession();
  // No model matched: the text is the first message of the new session.
  return { reply: "✅ New session started.", forwardText: args.trim() || undefined };
}

function helpText(): string {
  return [
    "edgeclaw commands:",
    "/new [model] · /reset · /stop · /compact · /export",
    "/status · /whoami · /commands · /tools · /skill <name> · /context · /models",
    "/model · /think <level> · /reasoning on|off · /verbose on|off|full · /queue <mode>",
    "Send a directive alone to keep it for this session; inside a message it applies once.",
  ].join("\n");
}

function commandsText(): string {
  return [
    "Commands:",
    ...COMMANDS.map(
      (spec) =>
        `${spec.usage} — ${spec.description}${spec.aliases.length ? ` (alias ${spec.aliases.map((a) => `/${a}`).join(", ")})` : ""}`,
    ),
  ].join("\n");
}

function whoamiText(ctx: CommandContext): string {
  const s = ctx.sender;
  return [
    `🆔 ${s.channel} sender id: ${s.senderId}${s.senderName ? ` (${s.senderName})` : ""}`,
    `Account: ${s.accountId} · Chat: ${s.chatType} · Agent: ${ctx.agentId}`,
    `Owner: ${ctx.senderIsOwner ? "yes" : "no"}`,
  ].join("\n");
}

/**
 * The fast path for one inbound text from a sender decideAccess allowed.
 *   drop  — unauthorized command-only message: nothing is sent, nothing runs.
 *   reply — handled entirely here (command, directive-only message): send `replies`, no model call.
 *   run   — run the model on `text` with `oneShot` overrides; send `replies` (inline /status etc.) first.
 */
export type CommandOutcome =
  | { action: "drop" }
  | { action: "reply"; replies: string[] }
  | { action: "run"; text: string; replies: string[]; oneShot: RunOverrides };

export async function handleCommandMessage(
  text: string,
  access: { commandAuthorized: boolean },
  session: SessionControl,
  ctx: CommandContext,
): Promise<CommandOutcome> {
  const parsed = parseCommandMessage(text, access.commandAuthorized, {
    isModelToken: (token) => isModelToken(ctx.config, token),
  });
  switch (parsed.kind) {
    case "ignore":
      return { action: "drop" };
    case "command": {
      const result = await executeCommand(parsed.command, session, ctx);
      const replies = result.reply ? [result.reply] : [];
      return result.forwardText
        ? { action: "run", text: result.forwardText, replies, oneShot: {} }
        : { action: "reply", replies };
    }
    case "directives": {
      const applied = await applyDirectives(parsed.directives, session, ctx, { persist: true });
      return { action: "reply", replies: applied.replies };
    }
    case "message": {
      const replies: string[] = [];
      for (const command of parsed.inlineCommands) {
        const result = await executeCommand(command, session, ctx);
        if (result.reply) replies.push(result.reply);
      }
      const applied = await applyDirectives(parsed.directives, session, ctx, { persist: false });
      replies.push(...applied.replies);
      if (!parsed.text.trim()) return { action: "reply", replies };
      return { action: "run", text: parsed.text, replies, oneShot: applied.oneShot };
    }
  }
}

async function usageCommand(args: string, session: SessionControl): Promise<string> {
  const action = parseUsageArgs(args);
  switch (action.kind) {
    case "cost":
      return formatSpend((await session.status()).spend);
    case "show":
      return `Usage footer: ${(await session.status()).responseUsage}. Options: off, tokens, full, reset, cost.`;
    case "set":
      await session.updateSettings({ responseUsage: action.mode });
      return action.mode === "off" ? "Usage footer off." : `Usage footer: ${action.mode}.`;
    case "clear":
      await session.updateSettings({ responseUsage: null });
      return `Usage footer back to the default (${(await session.status()).responseUsage}).`;
    case "invalid":
      return `Unknown /usage option "${action.arg}". Options: off, tokens, full, reset, cost.`;
  }
}

/**
 * `/approve <id> allow-once|allow-always|deny` (tools__exec-approvals.md): only the owner
 * (commands.ownerAllowFrom) decides; anyone else — a stranger in an open group above all — is
 * refused and the command keeps waiting.
 */
async function approveCommand(
  args: string,
  session: SessionControl,
  ctx: CommandContext,
): Promise<string> {
  const [id, rawDecision] = args.split(/\s+/).filter(Boolean);
  if (!ctx.senderIsOwner)
    return "Only the owner can approve commands (commands.ownerAllowFrom); nothing was approved.";
  if (!id) return "Usage: /approve <id> allow-once|allow-always|deny";
  const decision = (rawDecision ?? "allow-once").toLowerCase();
  if (decision !== "allow-once" && decision !== "allow-always" && decision !== "deny")
    return "Usage: /approve <id> allow-once|allow-always|deny";
  return session.approveExec(id, decision, `${ctx.sender.channel}:${ctx.sender.senderId}`);
}
