import { execSchema, type ExecConfig } from "../config/exec-schema.ts";
import type { EdgeclawConfig } from "../config/schema.ts";

/**
 * Exec approvals (tools__exec-approvals.md) for commands in the sandbox: `tools.exec.security`
 * (deny / allowlist / full) and `ask` (off / on-miss / always), or the normalised `tools.exec.mode`
 * that sets both. Under "allowlist" a command runs only if every segment of its pipeline names an
 * allowlisted command or a safe bin; chains, redirections and shell expansion are a miss (as in
 * OpenClaw's allowlist mode). A miss asks (on-miss) or is refused (ask off); "always" asks for
 * every command. Asking means `/approve <id>` from the owner in the chat; `allow-always` stores the
 * command's segments (trusted-commands.ts), which then count as allowlisted for that agent.
 */
export type ExecDecision =
  | { kind: "run" }
  | { kind: "ask"; reason: string }
  | { kind: "deny"; reason: string };

export function effectivePolicy(exec: ExecConfig): {
  security: "deny" | "allowlist" | "full";
  ask: "off" | "on-miss" | "always";
} {
  switch (exec.mode) {
    case "deny":
      return { security: "deny", ask: "off" };
    case "allowlist":
      return { security: "allowlist", ask: "off" };
    case "ask":
      return { security: "allowlist", ask: "on-miss" };
    case "full":
      return { security: "full", ask: "off" };
    default:
      return { security: exec.security, ask: exec.ask };
  }
}

/** Keys an agent may set for itself in agents.list[].tools.exec (OpenClaw: approvals per agent). */
const PER_AGENT_POLICY_KEYS = ["mode", "security", "ask", "allowlist", "safeBins"] as const;

/**
 * tools.exec with the agent's own approval policy over it (agents.list[].tools.exec: mode,
 * security, ask, allowlist, safeBins; the other exec keys are global).
 */
export function execPolicyFor(config: EdgeclawConfig, agentId: string): ExecConfig {
  const agent = config.agents.list.find((entry) => entry.id === agentId) as
    | { tools?: { exec?: Record<string, unknown> } }
    | undefined;
  const own = agent?.tools?.exec;
  if (!own || typeof own !== "object") return config.tools.exec;
  const merged: Record<string, unknown> = { ...config.tools.exec };
  for (const key of PER_AGENT_POLICY_KEYS) if (key in own) merged[key] = own[key];
  // A per-agent mode replaces the global one; per-agent security/ask then apply as written.
  if (!("mode" in own) && ("security" in own || "ask" in own)) delete merged.mode;
  return execSchema.parse(merged);
}

/**
 * A call's `ask: "always"` (it may only tighten): the effective policy with ask "always", whatever
 * `mode` said (mode otherwise wins over security/ask, and would drop the call's request).
 */
export function withAskAlways(exec: ExecConfig): ExecConfig {
  return { ...exec, mode: undefined, security: effectivePolicy(exec).security, ask: "always" };
}

export function decideExec(
  exec: ExecConfig,
  command: string,
  /** Segments stored by allow-always for this agent (exact text, whitespace normalised). */
  trusted: readonly string[] = [],
): ExecDecision {
  const { security, ask } = effectivePolicy(exec);
  if (security === "deny")
    return {
      kind: "deny",
      reason: 'exec is denied here (tools.exec.security "deny" / tools.exec.mode "deny")',
    };
  if (ask === "always") return { kind: "ask", reason: 'tools.exec.ask is "always"' };
  if (security === "full") return { kind: "run" };
  if (allowlisted(exec, command, trusted)) return { kind: "run" };
  if (ask === "on-miss")
    return { kind: "ask", reason: "the command is not on tools.exec.allowlist / safeBins" };
  return {
    kind: "deny",
    reason:
      'the command is not on tools.exec.allowlist or tools.exec.safeBins (tools.exec.security "allowlist"); chains, redirections and $(…) never match',
  };
}

/**
 * The `|` segments of a plain command, whitespace normalised; undefined when it uses anything
 * fancier (chains, redirections, expansion, subshells, line breaks, escapes), which never matches
 * an allowlist and is never stored by allow-always.
 */
export function commandSegments(command: string): string[] | undefined {
  if (/[;&<>`$(){}\n\\]/.test(command) || command.includes("||")) return undefined;
  const segments = command.split("|").map((segment) => segment.trim().split(/\s+/).join(" "));
  if (segments.some((segment) => !segment)) return undefined;
  return segments;
}

/** Every `|` segment's command is allowlisted (glob), trusted (allow-always) or a safe bin. */
export function allowlisted(
  exec: ExecConfig,
  command: string,
  trusted: readonly string[] = [],
): boolean {
  const segments = commandSegments(command);
  if (!segments) return false;
  return segments.every((segment) => {
    if (trustable(segment) && trusted.includes(segment)) return true;
    const [name, ...args] = segment.split(" ");
    if (!name) return false;
    if (exec.allowlist.some((pattern) => globMatch(pattern, name))) return true;
    // A safe bin filters stdin: it may take flags, never a file to read.
    return (
      !name.includes("/") &&
      exec.safeBins.includes(name) &&
      args.every((arg) => arg.startsWith("-") && !arg.includes("/"))
    );
  });
}

/**
 * Whether allow-always may bind to a segment: plain words only (no quotes, globs, ~ or variables),
 * so its text is exactly what runs and a stored entry cannot be stretched to another command.
 */
export function trustable(segment: string): boolean {
  return /^[A-Za-z0-9_./=:@%+,-]+( [A-Za-z0-9_./=:@%+,-]+)*$/.test(segment);
}

function globMatch(pattern: string, name: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`).test(name);
}
