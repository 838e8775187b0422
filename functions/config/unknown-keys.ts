import type * as z from "zod";
import { channelAccessSchema } from "./channel-access.ts";
import { OPENCLAW_KEY_TREE, type KeyTree } from "./openclaw-keys.ts";

/**
 * Keys in a config file that edgeclaw does not read. A key OpenClaw documents (openclaw-keys.ts) is
 * a warning — the file may be shared with an OpenClaw install, and the key simply does nothing here
 * yet. Any other key is an error, with the closest known name: `sesion`, `agents.defaults.modle` and
 * `channels.slak` must not pass silently.
 */
export interface UnknownKeys {
  errors: string[];
  warnings: string[];
}

/**
 * Keys the gateway reads through views of its own rather than through the config schema (agents.ts,
 * accounts.ts, access.ts, commands/models.ts, slack/progress.ts, sandbox/placement.ts,
 * sandbox/approval.ts's execPolicyFor, compute-env/config.ts): known, and not this pass's to check.
 * "*" matches any one segment.
 */
const READ_ELSEWHERE = [
  "agents.list.[].identity",
  "agents.list.[].groupChat",
  "agents.list.[].sandbox",
  "agents.list.[].computeEnv",
  "agents.list.[].tools.exec",
  "agents.entries",
  "agents.defaults.models",
  "messages.ackReaction",
  "messages.ackReactionScope",
  "channels.*.accounts",
  "channels.*.defaultAccount",
  "channels.*.channels",
].map((entry) => entry.split("."));

function readElsewhere(pattern: string[]): boolean {
  return READ_ELSEWHERE.some(
    (entry) =>
      entry.length === pattern.length &&
      entry.every((segment, i) => segment === "*" || segment === pattern[i]),
  );
}

/** Channel blocks without a schema of their own are read through the shared access keys (companion channels). */
const OTHER_CHANNEL_SCHEMA: z.ZodType = channelAccessSchema;

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** `schema` is the one the config is parsed with (the gateway's: functions/channels/gateway-config.ts). */
export function findUnknownKeys(
  raw: unknown,
  schema: z.ZodType,
  tree: KeyTree = OPENCLAW_KEY_TREE,
): UnknownKeys {
  const result: UnknownKeys = { errors: [], warnings: [] };
  walk(raw, schema, [], [], { tree, companionChannels: companionChannels(raw) }, result);
  return result;
}

interface Known {
  tree: KeyTree;
  /** Channels an ingress key may speak for: the companion serves them, so their blocks are real. */
  companionChannels: Set<string>;
}

function companionChannels(raw: unknown): Set<string> {
  const keys =
    isPlainObject(raw) && isPlainObject(raw.companion) ? raw.companion.ingressKeys : undefined;
  if (!Array.isArray(keys)) return new Set();
  return new Set(
    keys.flatMap((key) =>
      isPlainObject(key) && Array.isArray(key.channels)
        ? key.channels.filter((c): c is string => typeof c === "string")
        : [],
    ),
  );
}

/** Looks through wrappers (optional, default, prefault, nullable, pipes, catch, lazy) to the schema that holds the data. */
function unwrap(schema: unknown): Def {
  let def = defOf(schema);
  for (;;) {
    if (
      ["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"].includes(
        def.type,
      )
    )
      def = defOf(def.innerType);
    else if (def.type === "pipe") def = defOf(def.in);
    else if (def.type === "lazy") def = defOf((def.getter as () => unknown)());
    else return def;
  }
}

function walk(
  value: unknown,
  schema: unknown,
  path: string[],
  pattern: string[],
  known: Known,
  out: UnknownKeys,
): void {
  const def = unwrap(schema);
  if (def.type === "union" || def.type === "intersection") {
    const options = def.type === "union" ? (def.options as unknown[]) : [def.left, def.right];
    const objects = options.filter(
      (option) => unwrap(option).type === "object" || unwrap(option).type === "record",
    );
    if (!isPlainObject(value) || objects.length === 0) return;
    // The branch the value fits best: fewest complaints.
    let best: UnknownKeys | undefined;
    for (const option of objects) {
      const trial: UnknownKeys = { errors: [], warnings: [] };
      walk(value, option, path, pattern, known, trial);
      if (!best || trial.errors.length < best.errors.length) best = trial;
    }
    out.errors.push(...best!.errors);
    out.warnings.push(...best!.warnings);
    return;
  }
  if (def.type === "array" && Array.isArray(value)) {
    for (const [index, item] of value.entries())
      walk(item, def.element, [...path, `[${index}]`], [...pattern, "[]"], known, out);
    return;
  }
  if (def.type === "record" && isPlainObject(value)) {
    for (const [key, item] of Object.entries(value))
      walk(item, def.valueType, [...path, key], [...pattern, "*"], known, out);
    return;
  }
  if (def.type !== "object" || !isPlainObject(value)) return;
  const shape = def.shape as Record<string, unknown>;
  // A strict object already fails parsing on an unknown key; do not say it twice.
  const strict = def.catchall !== undefined && unwrap(def.catchall).type === "never";
  for (const [key, item] of Object.entries(value)) {
    const at = [...path, key];
    if (key in shape) {
      walk(item, shape[key], at, [...pattern, key], known, out);
      continue;
    }
    if (strict || readElsewhere([...pattern, key])) continue;
    const openclaw = openclawChildren(known.tree, pattern);
    const isChannelBlock = pattern.length === 1 && pattern[0] === "channels";
    if (openclaw.has(key) || (isChannelBlock && known.companionChannels.has(key))) {
      if (isChannelBlock) walk(item, OTHER_CHANNEL_SCHEMA, at, [...pattern, key], known, out);
      else
        out.warnings.push(
          `${dotted(at)}: an OpenClaw key edgeclaw does not implement yet; ignored`,
        );
      continue;
    }
    const hint = closest(key, [...Object.keys(shape), ...openclaw]);
    out.errors.push(`${dotted(at)}: unknown key${hint ? ` (did you mean "${hint}"?)` : ""}`);
  }
}

/**
 * The key names OpenClaw documents at `pattern` (record keys as "*", array items as "[]"). A
 * concrete name the tree does not list follows its "*" branch; "*" in the pattern takes every
 * branch; array levels the pages leave out are skipped.
 */
function openclawChildren(tree: KeyTree, pattern: string[]): Set<string> {
  let nodes: KeyTree[] = [tree];
  for (const segment of pattern) {
    const next: KeyTree[] = [];
    for (const node of nodes) {
      if (segment === "[]") next.push(node["[]"] ?? node);
      else if (segment === "*")
        next.push(
          ...Object.entries(node)
            .filter(([key]) => key !== "[]")
            .map(([, child]) => child),
        );
      else if (node[segment]) next.push(node[segment]);
      else if (node["*"]) next.push(node["*"]);
    }
    nodes = next;
    if (nodes.length === 0) break;
  }
  const names = new Set<string>();
  for (const node of nodes)
    for (const key of Object.keys(node)) if (key !== "*" && key !== "[]") names.add(key);
  return names;
}

function dotted(path: string[]): string {
  return path.reduce(
    (text, segment) =>
      segment.startsWith("[") ? `${text}${segment}` : text ? `${text}.${segment}` : segment,
    "",
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The known name within two edits of `key` (case ignored), if one is clearly closest. */
function closest(key: string, names: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of names) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}
