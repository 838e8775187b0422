import type { Connection } from "./http.ts";

/**
 * Every `edgeclaw` subcommand: its arguments, the options it takes (anything else is a usage error),
 * its own help text, and what it does. Connection options (--url, --token) and --json apply to all
 * commands that talk to a gateway. The list itself is commands.ts; each command file imports only
 * this shape, not the list that names it.
 */
export interface CommandInput {
  args: string[];
  options: Record<string, string | boolean | undefined>;
  /** Resolved on first use, so offline commands never need a gateway. */
  connection: () => Connection;
  print: (json: unknown, human: () => string) => void;
}

export interface CommandSpec {
  name: string;
  args: string[];
  /** Options beyond the shared ones, with their value name (`"flag"`: a boolean switch that takes no value). */
  options: Record<string, string>;
  summary: string;
  /** Talks to no gateway: no --url / --token / --json. */
  offline?: boolean;
  run(input: CommandInput): Promise<number>;
}
