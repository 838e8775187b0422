import { parseArgs, type ParseArgsConfig } from "node:util";
import * as z from "zod";
import { COMMANDS } from "./cli/commands.ts";
import type { CommandSpec } from "./cli/command-spec.ts";
import { findConnection } from "./cli/connection.ts";
import { CliError, UsageError, type Connection } from "./cli/http.ts";

/**
 * `npx edgeclaw …` — the operator CLI over a gateway's /admin API. With no --url it finds the local
 * `npm run dev` by itself (URL and generated token from its data dir). Tables for people, --json for
 * scripts; exits 1 with the server's reason on failure, 2 on a usage error (unknown command or
 * option, missing or extra argument, bad value). `edgeclaw <command> --help` explains one command.
 */
const SHARED_OPTIONS = {
  url: "url",
  token: "token",
} as const;

/** A usage error of one command (its help is printed with it). */
class CommandUsageError extends UsageError {
  constructor(
    message: string,
    readonly command?: CommandSpec,
  ) {
    super(message);
  }
}

/**
 * Options that take a number, and what they accept. Checked here for every command, so `--limit -5`
 * and `--timeout 0` are refused the same way everywhere (exit 2, naming the option and the value).
 */
const NUMBER_OPTIONS: Record<string, { whole: boolean; what: string }> = {
  limit: { whole: true, what: "a positive whole number" },
  timeout: { whole: false, what: "a positive number of seconds" },
  "timeout-seconds": { whole: true, what: "a positive whole number of seconds" },
  usd: { whole: false, what: "a positive amount in USD" },
  tokens: { whole: true, what: "a positive whole number of tokens" },
};

function checkNumberOption(name: string, value: string | boolean | undefined): void {
  const rule = NUMBER_OPTIONS[name];
  if (!rule || typeof value !== "string") return;
  const number = Number(value);
  const ok =
    value.trim() !== "" &&
    Number.isFinite(number) &&
    number > 0 &&
    (!rule.whole || Number.isInteger(number)) &&
    number <= 1e12;
  if (!ok)
    throw new UsageError(
      `--${name} must be ${rule.what}, got "${value}"${number <= 0 ? " (negative numbers and zero are refused)" : ""}`,
    );
}

/**
 * `--group -1001234567890` (Telegram's group ids are negative) and `--limit -5`: node's parseArgs
 * takes a value that starts with "-" for an option, so such a value is joined to its option
 * (`--group=-1001234567890`) and then checked like any other.
 */
function joinNegativeValues(argv: string[], valueOptions: Set<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    const name = /^--([\w-]+)$/.exec(token)?.[1];
    const next = argv[i + 1];
    if (name && valueOptions.has(name) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${token}=${next}`);
      i++;
    } else out.push(token);
  }
  return out;
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The command names closest to what was typed (compared word for word, as many words as each name has). */
function closestCommands(words: string[]): string[] {
  const scored = COMMANDS.map((command) => {
    const typed = words.slice(0, command.name.split(" ").length).join(" ");
    return { name: command.name, score: distance(typed, command.name) };
  });
  const best = Math.min(...scored.map((entry) => entry.score));
  const limit = Math.max(2, Math.floor(words.slice(0, 2).join(" ").length / 3));
  return best > limit ? [] : scored.filter((entry) => entry.score === best).map((e) => e.name);
}

/** `edgeclaw sessions`: the commands of a group, when the words typed are only its first words. */
function groupCommands(words: string[]): CommandSpec[] {
  if (!words.length) return [];
  const prefix = `${words.join(" ")} `;
  return COMMANDS.filter((command) => command.name.startsWith(prefix));
}

function groupListing(group: string, commands: CommandSpec[]): string {
  return `usage: edgeclaw ${group} <command> [options]\n\n${commands
    .map((spec) => `  ${commandLine(spec).padEnd(52)} ${spec.summary}`)
    .join("\n")}\n\nedgeclaw <command> --help explains one.`;
}

function commandLine(spec: CommandSpec): string {
  const args = spec.args.map((arg) => `<${arg}>`);
  const options = Object.entries(spec.options).map(([name, value]) =>
    value === "flag" ? `[--${name}]` : `[--${name} <${value}>]`,
  );
  return [spec.name, ...args, ...options].join(" ");
}

const GENERAL_OPTIONS = `options (every command that talks to a gateway):
  --url <url>      gateway URL (EDGECLAW_URL; default: the running \`npm run dev\` of EDGECLAW_DATA_DIR)
  --token <token>  gateway token (EDGECLAW_GATEWAY_TOKEN / OPENCLAW_GATEWAY_TOKEN; default: that dev's generated one)
  --json           print the server's JSON
  -h, --help       help (for one command: edgeclaw <command> --help)`;

const USAGE = `usage: edgeclaw <command> [options]

${COMMANDS.map((spec) => `  ${commandLine(spec).padEnd(52)} ${spec.summary}`).join("\n")}

${GENERAL_OPTIONS}`;

function commandHelp(spec: CommandSpec): string {
  if (spec.offline)
    return `usage: edgeclaw ${commandLine(spec)}\n\n  ${spec.summary}\n\n  -h, --help       this help`;
  return `usage: edgeclaw ${commandLine(spec)} [--url <url>] [--token <token>] [--json]\n\n  ${spec.summary}\n\n${GENERAL_OPTIONS}`;
}

async function main(argv: string[]): Promise<number> {
  // First pass, lenient: which command (option values are not words of it).
  const valueOptions = new Set([
    ...Object.keys(SHARED_OPTIONS),
    ...COMMANDS.flatMap((command) =>
      Object.entries(command.options)
        .filter(([, value]) => value !== "flag")
        .map(([name]) => name),
    ),
  ]);
  const lenient = Object.fromEntries(
    [...valueOptions].map((name) => [name, { type: "string" as const }]),
  );
  argv = joinNegativeValues(argv, valueOptions);
  const words = parseArgs({
    args: argv,
    options: lenient,
    allowPositionals: true,
    strict: false,
  }).positionals;
  // Command names are two or three words (`pairing approve`, `channels telegram info`).
  const spec = COMMANDS.find(
    (command) => command.name === words.slice(0, command.name.split(" ").length).join(" "),
  );
  const wantsHelp = argv.includes("--help") || argv.includes("-h");
  if (!spec) {
    if (argv.length === 0) {
      console.error(USAGE);
      return 2;
    }
    // The longest run of typed words that is a group (`sessions`, `channels telegram`).
    for (let n = Math.min(words.length, 2); n > 0; n--) {
      const group = groupCommands(words.slice(0, n));
      if (!group.length) continue;
      const name = words.slice(0, n).join(" ");
      if (words.length === n) {
        if (wantsHelp) {
          console.log(groupListing(name, group));
          return 0;
        }
        console.error(`edgeclaw: "${name}" needs a command\n\n${groupListing(name, group)}`);
        return 2;
      }
      break;
    }
    if (wantsHelp && !words.length) {
      console.log(USAGE);
      return 0;
    }
    if (!words.length) throw new CommandUsageError("no command given");
    const typed = words.slice(0, 2).join(" ");
    const close = closestCommands(words);
    throw new CommandUsageError(
      `unknown command "${typed}"${close.length ? `; did you mean ${close.map((name) => `"${name}"`).join(" or ")}?` : ""}`,
    );
  }
  if (wantsHelp) {
    console.log(commandHelp(spec));
    return 0;
  }

  const options: NonNullable<ParseArgsConfig["options"]> = {
    ...(spec.offline ? {} : { json: { type: "boolean" as const } }),
    help: { type: "boolean", short: "h" },
  };
  for (const name of [
    ...(spec.offline ? [] : Object.keys(SHARED_OPTIONS)),
    ...Object.keys(spec.options),
  ])
    options[name] = spec.options[name] === "flag" ? { type: "boolean" } : { type: "string" };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const negative = /^Unknown option '(-\d[^']*)'/.exec(message)?.[1];
    throw new CommandUsageError(
      negative
        ? `"${negative}": a negative number is not a valid argument here`
        : message.replace(/\. To specify a positional[\s\S]*$/, ""),
      spec,
    );
  }
  const args = parsed.positionals.slice(spec.name.split(" ").length);
  if (args.length < spec.args.length)
    throw new CommandUsageError(`missing <${spec.args[args.length]}>`, spec);
  if (args.length > spec.args.length)
    throw new CommandUsageError(`unexpected argument "${args[spec.args.length]}"`, spec);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  for (const [name, value] of Object.entries(values)) {
    if (value === "") throw new CommandUsageError(`--${name} needs a value`, spec);
    try {
      checkNumberOption(name, value);
    } catch (error) {
      throw new CommandUsageError((error as Error).message, spec);
    }
  }

  let connection: Connection | undefined;
  const run = spec.run({
    args,
    options: values,
    connection: () =>
      (connection ??= findConnection({
        url: values.url as string | undefined,
        token: values.token as string | undefined,
      })),
    print: (json, human) => console.log(values.json ? JSON.stringify(json, null, 2) : human()),
  });
  // A command's own usage errors (a bad period, a missing --name) come with its help too.
  return run.catch((error: unknown) => {
    if (error instanceof UsageError && !(error instanceof CommandUsageError))
      throw new CommandUsageError(error.message, spec);
    throw error;
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      const command = error instanceof CommandUsageError ? error.command : undefined;
      console.error(`edgeclaw: ${error.message}\n\n${command ? commandHelp(command) : USAGE}`);
      process.exit(2);
    }
    if (error instanceof CliError) {
      console.error(`edgeclaw: ${error.message}`);
      process.exit(1);
    }
    if (error instanceof z.ZodError) {
      console.error(
        `edgeclaw: unexpected answer from the server: ${error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      );
      process.exit(1);
    }
    console.error(`edgeclaw: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
