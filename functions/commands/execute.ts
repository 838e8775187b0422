import type { EdgeclawConfig, QueueDrop, QueueMode } from "../config/schema.ts";
import type { ReplyRoute } from "../core/envelope.ts";
import { parseDurationMs, formatDuration } from "./duration.ts";
import { formatStatus } from "./format-status.ts";
import { formatSpend, parseUsageArgs } from "./usage.ts";
import { isModelToken, modelChoices, resolveModelPick } from "./models.ts";
import { parseCommandMessage, type ParsedCommand, type ParsedDirective } from "./parse.ts";
import { COMMANDS } from "./registry.ts";
import { skillCommand, toolsCommand } from "./tools-skills.ts";
import {
  THINK_LEVELS,
  VERBOSE_LEVELS,
  type QueueSettings,
  type SessionControl,
  type ThinkLevel,
  type VerboseLevel,
} from "./session-control.ts";

/**
 * executeCommand(cmd, session, ctx) runs one parsed command against SessionControl and returns the
 * reply; applyDirectives(...) applies directives (persisted or one-shot); handleCommandMessage(...)
 * is the whole fast path for one inbound text. None of them calls a model.
 */
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

/** Settings that apply to one run only (inline directives). */
export interface RunOverrides {
  thinkLevel?: ThinkLevel;
  verbose?: VerboseLevel;
  queue?: QueueSettings;
}

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
    case "skill":
      return skillCommand(cmd.args, session, ctx);
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

/**
 * Persisted directives (a directive-only message) update the session and confirm; one-shot
 * directives (inside normal text) only shape this run — except /model, which always persists.
 */
export async function applyDirectives(
  directives: readonly ParsedDirective[],
  session: SessionControl,
  ctx: CommandContext,
  mode: { persist: boolean },
): Promise<{ replies: string[]; oneShot: RunOverrides }> {
  const replies: string[] = [];
  const oneShot: RunOverrides = {};
  for (const directive of directives) {
    switch (directive.name) {
      case "model":
        replies.push(await modelDirective(directive.args, session, ctx));
        break;
      case "think": {
        const arg = directive.args[0];
        if (!arg) {
          const status = await session.status();
          replies.push(
            `Thinking level: ${status.thinkLevel}. Options: ${THINK_LEVELS.join(", ")}, default.`,
          );
          break;
        }
        const level = normalizeThinkLevel(arg);
        if (level === undefined) {
          replies.push(
            `Unknown thinking level "${arg}". Options: ${THINK_LEVELS.join(", ")}, default.`,
          );
          break;
        }
        if (!mode.persist) {
          if (level !== null) oneShot.thinkLevel = level;
          break;
        }
        await session.updateSettings({ thinkLevel: level });
        replies.push(
          level === null
            ? "Thinking level reset to default."
            : level === "off"
              ? "Thinking disabled."
              : `Thinking level set to ${level}.`,
        );
        break;
      }
      case "verbose": {
        const arg = directive.args[0]?.toLowerCase();
        if (!arg) {
          replies.push(`Verbose: ${(await session.status()).verbose}. Options: on, off, full.`);
          break;
        }
        if (!(VERBOSE_LEVELS as readonly string[]).includes(arg)) {
          replies.push(`Unknown verbose level "${arg}". Options: on, off, full.`);
          break;
        }
        const level = arg as VerboseLevel;
        if (!mode.persist) {
          oneShot.verbose = level;
          break;
        }
        await session.updateSettings({ verbose: level });
        replies.push(
          level === "off"
            ? "Verbose logging disabled."
            : level === "full"
              ? "Verbose logging set to full."
              : "Verbose logging enabled.",
        );
        break;
      }
      case "queue": {
        const parsed = parseQueueArgs(directive.args);
        if ("error" in parsed) {
          replies.push(parsed.error);
          break;
        }
        if (parsed.show) {
          const queue = (await session.status()).queue;
          replies.push(
            `Queue: ${queue.mode} (debounce ${formatDuration(queue.debounceMs)} · cap ${queue.cap} · drop ${queue.drop}). Modes: steer, followup, collect, interrupt.`,
          );
          break;
        }
        if (parsed.clear) {
          if (mode.persist) {
            await session.updateSettings({ queue: null });
            replies.push("Queue settings reset to the configured default.");
          }
          break;
        }
        if (!mode.persist) {
          oneShot.queue = parsed.settings;
          break;
        }
        const current = (await session.getSettings()).queue ?? {};
        await session.updateSettings({ queue: { ...current, ...parsed.settings } });
        replies.push(`Queue set: ${describeQueue(parsed.settings)}.`);
        break;
      }
    }
  }
  return { replies, oneShot };
}

async function modelDirective(
  args: string[],
  session: SessionControl,
  ctx: CommandContext,
): Promise<string> {
  const [arg] = args.filter((a) => a !== "-s" && a !== "--session");
  if (!arg || arg.toLowerCase() === "status" || arg.toLowerCase() === "list") {
    const status = await session.status();
    const choices = modelChoices(ctx.config);
    const list = choices.map((ref, i) => `${i + 1}. ${ref}${ref === status.model ? " ✓" : ""}`);
    return [
      `Model: ${status.model}${status.modelOverride ? " (session override)" : ""}`,
      ...list,
      "Pick with /model <#|name>, clear with /model default.",
    ].join("\n");
  }
  if (arg.toLowerCase() === "default") {
    await session.updateSettings({ modelOverride: null });
    return "Model reset to the configured default.";
  }
  const pick = resolveModelPick(ctx.config, arg);
  if (!pick.ok) return pick.reason;
  // edgeclaw's config is bundled at deploy and never written from chat: every pick is session-scoped.
  await session.updateSettings({ modelOverride: pick.ref });
  return `Model set to ${pick.ref} for this session.`;
}

function normalizeThinkLevel(input: string): ThinkLevel | null | undefined {
  const value = input.toLowerCase();
  if (["default", "inherit", "clear", "reset", "unpin"].includes(value)) return null;
  if (["x-high", "x_high", "extra-high", "extra_high"].includes(value)) return "xhigh";
  if (value === "highest") return "high";
  if (value === "on") return "low";
  return (THINK_LEVELS as readonly string[]).includes(value) ? (value as ThinkLevel) : undefined;
}

const QUEUE_MODES: readonly QueueMode[] = ["steer", "followup", "collect", "interrupt"];
const QUEUE_DROPS: readonly QueueDrop[] = ["summarize", "old", "new"];

export function parseQueueArgs(
  args: readonly string[],
):
  | { show: true }
  | { clear: true; show?: false }
  | { settings: QueueSettings; show?: false; clear?: false }
  | { error: string } {
  if (args.length === 0) return { show: true };
  const settings: QueueSettings = {};
  for (const raw of args) {
    const arg = raw.toLowerCase();
    if (arg === "default" || arg === "reset") return { clear: true };
    if ((QUEUE_MODES as readonly string[]).includes(arg)) {
      settings.mode = arg as QueueMode;
      continue;
    }
    const option = /^(debounce|cap|drop):(.+)$/.exec(arg);
    if (!option)
      return {
        error: `Unknown queue option "${raw}". Use /queue <steer|followup|collect|interrupt> [debounce:2s cap:20 drop:summarize|old|new].`,
      };
    const [, key, value] = option;
    if (key === "debounce") {
      const ms = parseDurationMs(value!);
      if (ms === undefined)
        return { error: `Bad debounce "${value}": use milliseconds or 500ms, 2s, 1m.` };
      settings.debounceMs = ms;
    } else if (key === "cap") {
      const cap = Number(value);
      // OpenClaw ignores cap < 1.
      if (!Number.isInteger(cap)) return { error: `Bad cap "${value}": use a whole number.` };
      if (cap >= 1) settings.cap = cap;
    } else {
      if (!(QUEUE_DROPS as readonly string[]).includes(value!))
        return { error: `Bad drop "${value}": use summarize, old or new.` };
      settings.drop = value as QueueDrop;
    }
  }
  return { settings };
}

function describeQueue(settings: QueueSettings): string {
  const parts: string[] = [];
  if (settings.mode) parts.push(`mode ${settings.mode}`);
  if (settings.debounceMs !== undefined)
    parts.push(`debounce ${formatDuration(settings.debounceMs)}`);
  if (settings.cap !== undefined) parts.push(`cap ${settings.cap}`);
  if (settings.drop) parts.push(`drop ${settings.drop}`);
  return parts.join(" · ") || "no change";
}

function helpText(): string {
  return [
    "edgeclaw commands:",
    "/new [model] · /reset · /stop · /compact",
    "/status · /whoami · /commands · /tools · /skill <name>",
    "/model · /think <level> · /verbose on|off|full · /queue <mode>",
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
