import type { ExecConfig } from "../config/exec-schema.ts";

/**
 * Exec approvals (tools__exec-approvals.md) for commands in the sandbox: `tools.exec.security`
 * (deny / allowlist / full) and `ask` (off / on-miss / always), or the normalised `tools.exec.mode`
 * that sets both. Under "allowlist" a command runs only if every segment of its pipeline names an
 * allowlisted command or a safe bin; chains, redirections and shell expansion are a miss (as in
 * OpenClaw's allowlist mode). A miss asks (on-miss) or is refused (ask off); "always" asks for
 * every command. Asking means `/approve <id>` from the owner in the chat.
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

export function decideExec(exec: ExecConfig, command: string): ExecDecision {
  const { security, ask } = effectivePolicy(exec);
  if (security === "deny")
    return {
      kind: "deny",
      reason: 'exec is denied here (tools.exec.security "deny" / tools.exec.mode "deny")',
    };
  if (ask === "always") return { kind: "ask", reason: 'tools.exec.ask is "always"' };
  if (security === "full") return { kind: "run" };
  if (allowlisted(exec, command)) return { kind: "run" };
  if (ask === "on-miss")
    return { kind: "ask", reason: "the command is not on tools.exec.allowlist / safeBins" };
  return {
    kind: "deny",
    reason:
      'the command is not on tools.exec.allowlist or tools.exec.safeBins (tools.exec.security "allowlist"); chains, redirections and $(…) never match',
  };
}

/** Every `|` segment's command is allowlisted (glob) or a safe bin; anything fancier is a miss. */
export function allowlisted(exec: ExecConfig, command: string): boolean {
  if (/[;&<>`$(){}\n\\]/.test(command) || command.includes("||")) return false;
  const segments = command.split("|").map((segment) => segment.trim());
  if (segments.some((segment) => !segment)) return false;
  return segments.every((segment) => {
    const [name, ...args] = segment.split(/\s+/);
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

function globMatch(pattern: string, name: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`).test(name);
}
