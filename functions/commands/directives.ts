import type { QueueDrop, QueueMode } from "../config/schema.ts";
import { parseDurationMs, formatDuration } from "./duration.ts";
import { modelChoices, resolveModelPick } from "./models.ts";
import type { CommandContext } from "./context.ts";
import type { ParsedDirective } from "./parse.ts";
import {
  REASONING_LEVELS,
  THINK_LEVELS,
  VERBOSE_LEVELS,
  type QueueSettings,
  type ReasoningLevel,
  type SessionControl,
  type ThinkLevel,
  type VerboseLevel,
} from "./session-control.ts";

/**
 * The directives (/model, /think, /reasoning, /verbose, /queue): alone in a message they change the
 * session and confirm; inside a message they shape that one run.
 */

/** Settings that apply to one run only (inline directives). */
export interface RunOverrides {
  thinkLevel?: ThinkLevel;
  reasoningLevel?: ReasoningLevel;
  verbose?: VerboseLevel;
  queue?: QueueSettings;
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
      case "reasoning": {
        const arg = directive.args[0]?.toLowerCase();
        if (!arg) {
          const status = await session.status();
          replies.push(`Reasoning: ${status.reasoningLevel}. Options: on, off, stream, default.`);
          break;
        }
        const level = normalizeReasoningLevel(arg);
        if (level === undefined) {
          replies.push(`Unknown reasoning level "${arg}". Options: on, off, stream, default.`);
          break;
        }
        if (!mode.persist) {
          if (level !== null) oneShot.reasoningLevel = level;
          break;
        }
        await session.updateSettings({ reasoningLevel: level });
        replies.push(
          level === null
            ? "Reasoning visibility reset to default."
            : level === "off"
              ? "Reasoning hidden."
              : level === "on"
                ? "Reasoning shown: each reply's thinking comes as its own message first."
                : "Reasoning stream: shown as its own message before each reply (no live preview lane on this gateway).",
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
    await session.updateSettings({ modelOverride: null, authProfile: null });
    return "Model reset to the configured default.";
  }
  const { model, profile } = splitProfilePick(arg);
  const pick = resolveModelPick(ctx.config, model);
  if (!pick.ok) return pick.reason;
  const provider = pick.ref.slice(0, pick.ref.indexOf("/")).toLowerCase();
  if (profile) {
    const entry = ctx.config.auth.profiles[profile];
    if (entry?.mode !== "api_key" || profileProvider(ctx, profile) !== provider)
      return `No API-key auth profile "${profile}" for ${provider}: ${profileList(ctx, provider)}.`;
  }
  // A pin stays while the picked model's provider has it; a model of another provider clears it.
  const pinned = profile ? undefined : (await session.getSettings()).authProfile;
  const keepPin = pinned !== undefined && profileProvider(ctx, pinned) === provider;
  // edgeclaw's config is bundled at deploy and never written from chat: every pick is session-scoped.
  await session.updateSettings({
    modelOverride: pick.ref,
    authProfile: profile ?? (keepPin ? undefined : null),
  });
  return `Model set to ${pick.ref}${profile ? ` with auth profile ${profile} first` : ""} for this session.`;
}

/** `/model Opus@anthropic:work`: the model, and the auth profile after the last `@` (its id has a colon). */
function splitProfilePick(arg: string): { model: string; profile?: string } {
  const at = arg.lastIndexOf("@");
  if (at <= 0 || !arg.slice(at + 1).includes(":")) return { model: arg };
  return { model: arg.slice(0, at), profile: arg.slice(at + 1) };
}

function profileProvider(ctx: CommandContext, id: string): string | undefined {
  const entry = ctx.config.auth.profiles[id];
  return entry ? (entry.provider ?? id.split(":")[0]!).toLowerCase() : undefined;
}

function profileList(ctx: CommandContext, provider: string): string {
  const ids = Object.entries(ctx.config.auth.profiles)
    .filter(([id, entry]) => entry.mode === "api_key" && profileProvider(ctx, id) === provider)
    .map(([id]) => id);
  return ids.length ? `its profiles are ${ids.join(", ")}` : "it has none (auth.profiles)";
}

function normalizeThinkLevel(input: string): ThinkLevel | null | undefined {
  const value = input.toLowerCase();
  if (["default", "inherit", "clear", "reset", "unpin"].includes(value)) return null;
  if (["x-high", "x_high", "extra-high", "extra_high"].includes(value)) return "xhigh";
  if (value === "highest") return "high";
  // OpenClaw's ultra is the provider's maximum plus sub-agent orchestration; the provider part is max.
  if (value === "ultra") return "max";
  if (value === "on") return "low";
  return (THINK_LEVELS as readonly string[]).includes(value) ? (value as ThinkLevel) : undefined;
}

function normalizeReasoningLevel(input: string): ReasoningLevel | null | undefined {
  if (["default", "inherit", "clear", "reset"].includes(input)) return null;
  return (REASONING_LEVELS as readonly string[]).includes(input)
    ? (input as ReasoningLevel)
    : undefined;
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
