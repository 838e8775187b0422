import { parseArgs } from "node:util";
import { z } from "zod";
import { adminRequest, CliError, type Connection } from "./cli/http.ts";
import { renderTable } from "./cli/table.ts";
import { readFileSync } from "node:fs";
import { ConfigFileError, parseConfigText } from "./lib/config-file.ts";

/**
 * `npx edgeclaw …` — the operator CLI. Talks to a local or deployed gateway's /admin API:
 * --url (default EDGECLAW_URL or http://127.0.0.1:8787), --token (default EDGECLAW_GATEWAY_TOKEN
 * or OPENCLAW_GATEWAY_TOKEN). Tables for people, --json for scripts; exits 1 with the server's
 * reason on failure, 2 on a usage error.
 */
const USAGE = `usage: edgeclaw <command> [options]

  pairing list <channel> [--account <id>]     pending DM pairing requests
  pairing approve <channel> <code>            approve a code (grants DM access)
  pairing reject <channel> <code>             drop a pending request
  allowlist list <channel> [--account <id>]   approved senders
  allowlist add <channel> <senderId> [--account <id>]
  allowlist remove <channel> <senderId> [--account <id>]
  sessions list [--agent <id>] [--limit <n>]  sessions, most recent first
  sessions show <key> [--limit <n>]           one session and its transcript
  sessions reset <key>                        reset a session now
  agents list                                 configured agents and their bindings
  config check [--file <edgeclaw.json5>]      validate the deployed config (or a local file)

options:
  --url <url>      gateway URL (EDGECLAW_URL, default http://127.0.0.1:8787)
  --token <token>  gateway token (EDGECLAW_GATEWAY_TOKEN / OPENCLAW_GATEWAY_TOKEN)
  --json           print the server's JSON
  -h, --help       this help`;

class UsageError extends Error {}

const pairingList = z.object({
  requests: z.array(z.object({ code: z.string(), accountId: z.string(), senderId: z.string(), senderName: z.string().nullish(), createdAt: z.string(), expiresAt: z.string() })),
});
const pairingAction = z.object({ ok: z.literal(true), channel: z.string(), accountId: z.string(), senderId: z.string(), ownerSet: z.boolean() });
const allowList = z.object({ entries: z.array(z.object({ accountId: z.string(), senderId: z.string(), source: z.string(), createdAt: z.string() })) });
const sessionRow = z.object({
  sessionKey: z.string(),
  sessionId: z.string(),
  agentId: z.string(),
  channel: z.string().nullish(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  sessionStartedAt: z.string(),
  updatedAt: z.string(),
});
const sessionsList = z.object({ sessions: z.array(sessionRow) });
const sessionShow = z.object({ session: sessionRow, transcript: z.array(z.object({ seq: z.number(), role: z.string(), content: z.unknown(), createdAt: z.string() })) });
const agentsList = z.object({ agents: z.array(z.object({ id: z.string(), name: z.string().nullish(), default: z.boolean(), model: z.string().nullish(), bindings: z.array(z.unknown()) })) });
const configReport = z.object({ ok: z.boolean(), errors: z.array(z.string()), warnings: z.array(z.string()) });

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      json: { type: "boolean", default: false },
      account: { type: "string" },
      agent: { type: "string" },
      limit: { type: "string" },
      file: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help || positionals.length === 0) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const conn: Connection = {
    url: values.url ?? process.env["EDGECLAW_URL"] ?? "http://127.0.0.1:8787",
    token: values.token ?? process.env["EDGECLAW_GATEWAY_TOKEN"] ?? process.env["OPENCLAW_GATEWAY_TOKEN"],
  };
  const [group, action, ...args] = positionals;
  const need = (index: number, name: string): string => {
    const value = args[index];
    if (!value) throw new UsageError(`missing <${name}>`);
    return encodeURIComponent(value);
  };
  const query = (params: Record<string, string | undefined>) => {
    const entries = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
    return entries.length ? `?${new URLSearchParams(entries).toString()}` : "";
  };
  const print = (json: unknown, human: () => string) => console.log(values.json ? JSON.stringify(json, null, 2) : human());

  switch (`${group} ${action ?? ""}`.trim()) {
    case "pairing list": {
      const json = await adminRequest(conn, "GET", `/pairing/${need(0, "channel")}${query({ account: values.account })}`);
      const data = pairingList.parse(json);
      print(json, () => renderTable(["CODE", "ACCOUNT", "SENDER", "NAME", "EXPIRES"], data.requests.map((r) => [r.code, r.accountId, r.senderId, r.senderName, r.expiresAt])));
      return 0;
    }
    case "pairing approve":
    case "pairing reject": {
      const json = await adminRequest(conn, "POST", `/pairing/${need(0, "channel")}/${action}`, { code: decodeURIComponent(need(1, "code")) });
      const data = pairingAction.parse(json);
      print(json, () =>
        action === "approve"
          ? `Approved ${data.senderId} on ${data.channel} (account ${data.accountId}): DM access granted.${data.ownerSet ? " First approval: this sender is now the owner." : ""}`
          : `Rejected the request from ${data.senderId} on ${data.channel}.`,
      );
      return 0;
    }
    case "allowlist list": {
      const json = await adminRequest(conn, "GET", `/allowlist/${need(0, "channel")}${query({ account: values.account })}`);
      const data = allowList.parse(json);
      print(json, () => renderTable(["ACCOUNT", "SENDER", "SOURCE", "ADDED"], data.entries.map((e) => [e.accountId, e.senderId, e.source, e.createdAt])));
      return 0;
    }
    case "allowlist add": {
      const json = await adminRequest(conn, "POST", `/allowlist/${need(0, "channel")}`, { senderId: decodeURIComponent(need(1, "senderId")), accountId: values.account });
      print(json, () => `Added ${args[1]} to the ${args[0]} allowlist.`);
      return 0;
    }
    case "allowlist remove": {
      const json = await adminRequest(conn, "DELETE", `/allowlist/${need(0, "channel")}/${need(1, "senderId")}${query({ account: values.account })}`);
      print(json, () => `Removed ${args[1]} from the ${args[0]} allowlist.`);
      return 0;
    }
    case "sessions list": {
      const json = await adminRequest(conn, "GET", `/sessions${query({ agent: values.agent, limit: values.limit })}`);
      const data = sessionsList.parse(json);
      print(json, () =>
        renderTable(["SESSION KEY", "AGENT", "CHANNEL", "TOKENS IN/OUT", "UPDATED"], data.sessions.map((s) => [s.sessionKey, s.agentId, s.channel, `${s.inputTokens}/${s.outputTokens}`, s.updatedAt])),
      );
      return 0;
    }
    case "sessions show": {
      const json = await adminRequest(conn, "GET", `/sessions/${need(0, "key")}${query({ limit: values.limit })}`);
      const data = sessionShow.parse(json);
      print(json, () =>
        [
          `${data.session.sessionKey} (agent ${data.session.agentId}, session ${data.session.sessionId}, started ${data.session.sessionStartedAt})`,
          "",
          ...data.transcript.map((e) => `#${e.seq} ${e.role}: ${typeof e.content === "string" ? e.content : JSON.stringify(e.content)}`),
        ].join("\n"),
      );
      return 0;
    }
    case "sessions reset": {
      const json = await adminRequest(conn, "POST", `/sessions/${need(0, "key")}/reset`);
      print(json, () => `Reset ${args[0]}.`);
      return 0;
    }
    case "agents list": {
      const json = await adminRequest(conn, "GET", "/agents");
      const data = agentsList.parse(json);
      print(json, () => renderTable(["AGENT", "DEFAULT", "MODEL", "BINDINGS"], data.agents.map((a) => [a.id, a.default ? "yes" : "", a.model, a.bindings.length])));
      return 0;
    }
    case "config check": {
      const json = values.file
        ? await adminRequest(conn, "POST", "/config/check", readConfigFile(values.file))
        : await adminRequest(conn, "GET", "/config/check");
      const data = configReport.parse(json);
      print(json, () =>
        [data.ok ? "config OK" : "config INVALID", ...data.errors.map((e) => `  error: ${e}`), ...data.warnings.map((w) => `  warning: ${w}`)].join("\n"),
      );
      return data.ok ? 0 : 1;
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(" ")}"`);
  }
}

/** A local config file, parsed (JSON5) but not validated: the server's check reports every problem. */
function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return parseConfigText(text, file);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message);
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`edgeclaw: ${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (error instanceof CliError) {
      console.error(`edgeclaw: ${error.message}`);
      process.exit(1);
    }
    if (error instanceof z.ZodError) {
      console.error(`edgeclaw: unexpected answer from the server: ${error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
      process.exit(1);
    }
    console.error(`edgeclaw: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
