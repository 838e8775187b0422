import { parseArgs, type ParseArgsConfig } from "node:util";
import { z } from "zod";
import { COMMANDS, type CommandSpec } from "./cli/commands.ts";
import { findConnection } from "./cli/connection.ts";
import { CliError, type Connection } from "./cli/http.ts";

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

class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandSpec,
  ) {
    super(message);
  }
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
    if (wantsHelp || argv.length === 0) {
      console.log(USAGE);
      return argv.length === 0 ? 2 : 0;
    }
    throw new UsageError(
      words.length ? `unknown command "${words.slice(0, 2).join(" ")}"` : "no command given",
    );
  }
  if (wantsHelp) {
    console.log(commandHelp(spec));
    return 0;
  }

  const options: NonNullable<ParseArgsConfig["options"]> = {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  };
  for (const name of [...Object.keys(SHARED_OPTIONS), ...Object.keys(spec.options)])
    options[name] = spec.options[name] === "flag" ? { type: "boolean" } : { type: "string" };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(
      error instanceof Error
        ? error.message.replace(/\. To specify a positional.*$/, "")
        : String(error),
      spec,
    );
  }
  const args = parsed.positionals.slice(spec.name.split(" ").length);
  if (args.length < spec.args.length)
    throw new UsageError(`missing <${spec.args[args.length]}>`, spec);
  if (args.length > spec.args.length)
    throw new UsageError(`unexpected argument "${args[spec.args.length]}"`, spec);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  for (const [name, value] of Object.entries(values)) {
    if (value === "") throw new UsageError(`--${name} needs a value`, spec);
  }
  if (values.limit !== undefined && !/^[1-9]\d{0,5}$/.test(String(values.limit)))
    throw new UsageError(`--limit must be a positive whole number, got "${values.limit}"`, spec);

  let connection: Connection | undefined;
  return spec.run({
    args,
    options: values,
    connection: () =>
      (connection ??= findConnection({
        url: values.url as string | undefined,
        token: values.token as string | undefined,
      })),
    print: (json, human) => console.log(values.json ? JSON.stringify(json, null, 2) : human()),
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(
        `edgeclaw: ${error.message}\n\n${error.command ? commandHelp(error.command) : USAGE}`,
      );
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
