import { COMMANDS } from "../cli/commands.ts";
import type { CommandSpec } from "../cli/command-spec.ts";
import { GENERATED_NOTE, tableCell } from "./markdown.ts";

/** docs/reference/cli.md: every `edgeclaw` subcommand from its spec (scripts/cli/commands.ts). */

function usage(spec: CommandSpec): string {
  const args = spec.args.map((arg) => `<${arg}>`);
  const options = Object.entries(spec.options).map(([name, value]) =>
    value === "flag" ? `[--${name}]` : `[--${name} <${value}>]`,
  );
  return ["edgeclaw", spec.name, ...args, ...options].join(" ");
}

export function cliReference(): string {
  const groups = new Map<string, CommandSpec[]>();
  for (const spec of COMMANDS) {
    const group = spec.name.split(" ")[0]!;
    groups.set(group, [...(groups.get(group) ?? []), spec]);
  }
  const sections = [...groups].map(([group, specs]) => {
    const rows = specs.map(
      (spec) => `| \`${tableCell(usage(spec))}\` | ${tableCell(spec.summary)} |`,
    );
    return `## ${group}\n\n| Command | What it does |\n| --- | --- |\n${rows.join("\n")}`;
  });
  return `# CLI

${GENERATED_NOTE}

\`npx edgeclaw <command>\` is the operator CLI over a gateway's [admin API](admin-api.md). With no
\`--url\` (or \`EDGECLAW_URL\`) it finds the running \`npm run dev\` of \`EDGECLAW_DATA_DIR\` (default
\`.edgeclaw/data\`) by itself, URL and generated token included. Every command that talks to a
gateway also takes \`--url <url>\`, \`--token <token>\` (default \`EDGECLAW_GATEWAY_TOKEN\` /
\`OPENCLAW_GATEWAY_TOKEN\`) and \`--json\` (the server's JSON instead of a table);
\`edgeclaw <command> --help\` explains one command; a group alone (\`edgeclaw sessions\`) lists its
commands. A usage error — an unknown command or option, a missing or extra argument, a bad value
(numbers must be positive: \`--limit -5\` is refused) — exits 2 with the command's usage and, for a
typo, the closest command (\`did you mean "sessions list"?\`). A failure the server or the
platform reports exits 1; an unknown id (session, job, budget scope) always reads
\`not found: <reason>\`. A value that starts with a dash is the option's value
(\`--group -1001234567890\`, Telegram's negative group ids).

${sections.join("\n\n")}
`;
}
