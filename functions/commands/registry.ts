/**
 * The slash commands and directives this gateway handles (tools/slash-commands), with aliases.
 *  - "command": a message that is only this command runs on the fast path (no queue, no model).
 *  - "inline": also a command, and additionally runs when embedded in normal text (/help /commands
 *    /status /whoami); stripped before the model sees the rest.
 *  - "directive": session settings; alone they persist, inside text they apply to that turn only
 *    (except /model, which persists even inline).
 */
export type CommandKind = "command" | "inline" | "directive";

export interface CommandSpec {
  name: string;
  aliases: string[];
  kind: CommandKind;
  usage: string;
  description: string;
}

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "new",
    aliases: [],
    kind: "command",
    usage: "/new [model]",
    description: "Archive this session and start a new one",
  },
  {
    name: "reset",
    aliases: [],
    kind: "command",
    usage: "/reset [soft [message]]",
    description: "Reset this session in place",
  },
  {
    name: "stop",
    aliases: [],
    kind: "command",
    usage: "/stop",
    description: "Abort the current run and cancel queued turns",
  },
  {
    name: "approve",
    aliases: [],
    kind: "command",
    usage: "/approve <id> allow-once|allow-always|deny",
    description: "Approve or deny a sandbox command waiting for approval (owner only)",
  },
  {
    name: "subagents",
    aliases: [],
    kind: "command",
    usage: "/subagents list | log <id|#> [limit] | info <id|#> | kill <id|#|all>",
    description: "This session's sub-agents: list, recent turns, details, stop one",
  },
  {
    name: "compact",
    aliases: [],
    kind: "command",
    usage: "/compact [instructions]",
    description: "Summarise older context now",
  },
  {
    name: "status",
    aliases: [],
    kind: "inline",
    usage: "/status",
    description: "Model, tokens, context window, queue mode, session age",
  },
  { name: "help", aliases: [], kind: "inline", usage: "/help", description: "Short help" },
  {
    name: "commands",
    aliases: [],
    kind: "inline",
    usage: "/commands",
    description: "List every command",
  },
  {
    name: "whoami",
    aliases: ["id"],
    kind: "inline",
    usage: "/whoami",
    description: "Show your sender id",
  },
  {
    name: "model",
    aliases: [],
    kind: "directive",
    usage: "/model [name|#|default|status][@<auth profile>] [-s]",
    description: "Show or pick the model for this session",
  },
  {
    name: "think",
    aliases: ["thinking", "t"],
    kind: "directive",
    usage: "/think <level|default>",
    description: "Thinking level (off, minimal, low, medium, high, xhigh, adaptive, max)",
  },
  {
    name: "reasoning",
    aliases: ["reason"],
    kind: "directive",
    usage: "/reasoning on|off|stream",
    description: "Show the model's thinking as its own message before the reply",
  },
  {
    name: "verbose",
    aliases: ["v"],
    kind: "directive",
    usage: "/verbose on|off|full",
    description: "Show tool progress in replies",
  },
  {
    name: "usage",
    aliases: [],
    kind: "command",
    usage: "/usage off|tokens|full|reset|cost",
    description: "Per-reply usage footer, or this session's spend (cost)",
  },
  {
    name: "env",
    aliases: [],
    kind: "command",
    usage: "/env [status|packages [env]|questions]",
    description: "Conda envs of the computing environment, their packages, open new-env questions",
  },
  {
    name: "context",
    aliases: [],
    kind: "command",
    usage: "/context [list|detail|json]",
    description:
      "What the next run sends the model: prompt, files, skills, tool schemas, transcript",
  },
  {
    name: "export-session",
    aliases: ["export"],
    kind: "command",
    usage: "/export-session [path]",
    description:
      "Owner only: write this session's transcript into the workspace (.md, .json, .html)",
  },
  {
    name: "send",
    aliases: [],
    kind: "command",
    usage: "/send on|off|inherit",
    description: "Owner only: let the agent's replies reach this chat, or hold them back",
  },
  {
    name: "models",
    aliases: [],
    kind: "command",
    usage: "/models [provider] [page] [limit=<n>|all]",
    description: "The configured providers, or one provider's models",
  },
  {
    name: "tools",
    aliases: [],
    kind: "command",
    usage: "/tools [compact|verbose]",
    description: "The tools the agent can use right now",
  },
  {
    name: "skill",
    aliases: [],
    kind: "command",
    usage: "/skill <name> [request]",
    description: "Run one of the agent's skills (without a name: list them)",
  },

  {
    name: "queue",
    aliases: [],
    kind: "directive",
    usage: "/queue <mode> [debounce:… cap:… drop:…] | default",
    description: "How messages queue while a run is active",
  },
];

const BY_NAME = new Map<string, CommandSpec>();
for (const spec of COMMANDS) {
  BY_NAME.set(spec.name, spec);
  for (const alias of spec.aliases) BY_NAME.set(alias, spec);
}

export function lookupCommand(name: string): CommandSpec | undefined {
  return BY_NAME.get(name.toLowerCase());
}
