import { lookupCommand, type CommandSpec } from "./registry.ts";
import { REASONING_LEVELS, THINK_LEVELS, VERBOSE_LEVELS } from "./session-control.ts";

/**
 * parseCommandMessage(text, authorized) — splits an inbound text into commands, directives and the
 * body the model sees, applying OpenClaw's rules:
 *  - a message that is only a known command → `command` (fast path); unauthorized → `ignore`
 *    (dropped silently);
 *  - a message made only of directives → `directives` (persisted); unauthorized → plain text;
 *  - otherwise `message`: authorized senders get inline directives (one-shot; /model persists) and
 *    inline shortcuts (/help /commands /status /whoami) stripped from the body; unauthorized senders'
 *    text reaches the model unchanged.
 * An optional `:` may follow the name (`/think: high`). Unknown `/words` are plain text.
 */
export interface ParsedCommand {
  /** Canonical name (aliases resolved). */
  name: string;
  spec: CommandSpec;
  /** Raw argument text after the name. */
  args: string;
}

export interface ParsedDirective {
  name: "model" | "think" | "reasoning" | "verbose" | "queue";
  /** Argument tokens (empty = show the current value). */
  args: string[];
}

export type ParsedMessage =
  | { kind: "command"; command: ParsedCommand }
  | { kind: "directives"; directives: ParsedDirective[] }
  | {
      kind: "message";
      text: string;
      directives: ParsedDirective[];
      inlineCommands: ParsedCommand[];
    }
  | { kind: "ignore" };

export interface ParseOptions {
  /** Whether a token names a model (alias, provider/model, number); used for inline `/model`. */
  isModelToken?: (token: string) => boolean;
}

const THINK_WORDS = new Set<string>([
  ...THINK_LEVELS,
  "default",
  "inherit",
  "clear",
  "reset",
  "unpin",
  "x-high",
  "x_high",
  "extra-high",
  "extra_high",
  "highest",
  "ultra",
  "on",
]);
const REASONING_WORDS = new Set<string>([
  ...REASONING_LEVELS,
  "default",
  "inherit",
  "clear",
  "reset",
]);
const VERBOSE_WORDS = new Set<string>(VERBOSE_LEVELS);
const QUEUE_MODES = new Set(["steer", "followup", "collect", "interrupt", "default", "reset"]);
const QUEUE_OPTION = /^(debounce|cap|drop):\S+$/i;

/** `/name`, `/name:` or `/name:arg` at the start of a token. */
function splitCommandToken(token: string): { name: string; attached?: string } | undefined {
  const match = /^\/([a-z][a-z0-9_-]*)(?::(.*))?$/i.exec(token);
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), attached: match[2] ? match[2] : undefined };
}

/** Cheap check used by mention gating: does this text start with a known command or directive? */
export function isCommandLike(text: string): boolean {
  const first = text.trim().split(/\s+/, 1)[0] ?? "";
  const split = splitCommandToken(first);
  return split !== undefined && lookupCommand(split.name) !== undefined;
}

export function parseCommandMessage(
  text: string,
  authorized: boolean,
  options: ParseOptions = {},
): ParsedMessage {
  const trimmed = text.trim();
  const tokens = trimmed.length ? trimmed.split(/\s+/) : [];
  const first = tokens[0] ? splitCommandToken(tokens[0]) : undefined;
  const firstSpec = first ? lookupCommand(first.name) : undefined;

  if (firstSpec && firstSpec.kind !== "directive") {
    if (!authorized) return { kind: "ignore" };
    const args = trimmed.slice(tokens[0]!.length).trim();
    return {
      kind: "command",
      command: { name: firstSpec.name, spec: firstSpec, args: joinArgs(first?.attached, args) },
    };
  }
  if (!authorized) return { kind: "message", text, directives: [], inlineCommands: [] };

  const directives: ParsedDirective[] = [];
  const inlineCommands: ParsedCommand[] = [];
  const rest: string[] = [];
  // First pass: are all tokens directives (and their arguments)? Then arguments are read greedily.
  const whole = consumeDirectives(tokens, true, options);
  if (whole.rest.length === 0 && whole.directives.length > 0)
    return { kind: "directives", directives: whole.directives };

  const inline = consumeDirectives(tokens, false, options);
  for (const directive of inline.directives) directives.push(directive);
  for (const token of inline.rest) {
    const split = splitCommandToken(token);
    const spec = split ? lookupCommand(split.name) : undefined;
    if (spec?.kind === "inline" && !split?.attached) {
      inlineCommands.push({ name: spec.name, spec, args: "" });
      continue;
    }
    rest.push(token);
  }
  if (directives.length === 0 && inlineCommands.length === 0)
    return { kind: "message", text, directives, inlineCommands };
  return { kind: "message", text: rest.join(" "), directives, inlineCommands };
}

function joinArgs(attached: string | undefined, rest: string): string {
  return [attached, rest].filter((part) => part?.length).join(" ");
}

/**
 * Walks the tokens, taking directives with their arguments. `standalone` (directive-only message):
 * a directive may have no argument (a query). Inline: a directive counts only with a valid argument,
 * otherwise its token stays in the text.
 */
function consumeDirectives(
  tokens: string[],
  standalone: boolean,
  options: ParseOptions,
): { directives: ParsedDirective[]; rest: string[] } {
  const directives: ParsedDirective[] = [];
  const rest: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const split = splitCommandToken(token);
    const spec = split ? lookupCommand(split.name) : undefined;
    if (!split || spec?.kind !== "directive") {
      rest.push(token);
      continue;
    }
    const name = spec.name as ParsedDirective["name"];
    const pending = split.attached ? [split.attached, ...tokens.slice(i + 1)] : tokens.slice(i + 1);
    const taken = takeArgs(name, pending, standalone, options);
    if (!standalone && taken.length === 0) {
      rest.push(token);
      continue;
    }
    directives.push({ name, args: taken });
    i += taken.length - (split.attached ? 1 : 0);
  }
  return { directives, rest };
}

function takeArgs(
  name: ParsedDirective["name"],
  pending: string[],
  standalone: boolean,
  options: ParseOptions,
): string[] {
  const next = pending[0];
  if (next === undefined || splitCommandToken(next)) return [];
  const lower = next.toLowerCase();
  switch (name) {
    case "think":
      return THINK_WORDS.has(lower) ? [next] : standalone ? [next] : [];
    case "reasoning":
      return REASONING_WORDS.has(lower) ? [next] : standalone ? [next] : [];
    case "verbose":
      return VERBOSE_WORDS.has(lower) ? [next] : standalone ? [next] : [];
    case "model": {
      const looksLikeModel = options.isModelToken
        ? options.isModelToken(next)
        : /^[^/\s]+\/\S+$/.test(next) || /^\d+$/.test(next);
      if (!standalone && !looksLikeModel) return [];
      const taken = [next];
      const flag = pending[1]?.toLowerCase();
      if (flag === "-s" || flag === "--session") taken.push(pending[1]!);
      return taken;
    }
    case "queue": {
      const taken: string[] = [];
      let j = 0;
      if (QUEUE_MODES.has(lower)) taken.push(pending[j++]!);
      else if (!QUEUE_OPTION.test(next) && standalone) taken.push(pending[j++]!);
      while (pending[j] !== undefined && QUEUE_OPTION.test(pending[j]!)) taken.push(pending[j++]!);
      return taken;
    }
  }
}
