import { readFileSync } from "node:fs";
import * as z from "zod";
import { checkConfig } from "../../functions/routing/config-check.ts";
import { ConfigFileError, parseConfigText } from "../lib/config-file.ts";
import { adminRequest, CliError } from "./http.ts";
import type { CommandSpec } from "./command-spec.ts";
import { renderTable } from "./table.ts";
import { formatTranscript } from "./transcript.ts";
import { formatSandbox, sandboxReportSchema } from "./sandbox-view.ts";
import { BUDGET_COMMANDS } from "./budgets.ts";
import { MEMORY_COMMANDS } from "./memory.ts";
import { CRON_COMMANDS } from "./cron.ts";
import { AUDIT_COMMANDS } from "./audit.ts";
import { APPROVAL_COMMANDS } from "./approvals.ts";
import { STATUS_COMMAND } from "./status.ts";
import { ENV_COMMANDS } from "./env.ts";
import { SIMULATE_COMMAND } from "./simulate.ts";
import { DEPLOY_COMMAND } from "./deploy.ts";
import { channelPieces } from "../lib/channel-pieces.ts";

function isCommandList(value: unknown): value is CommandSpec[] {
  return (
    Array.isArray(value) &&
    value.every((spec) => typeof spec?.name === "string" && typeof spec.run === "function")
  );
}

/** Each channel's own commands (`functions/channels/<id>/cli.ts`), in the registry's order. */
const channelCommands = (
  await channelPieces(
    "cli.ts",
    "commands",
    isCommandList,
    (id) => import(`../../functions/channels/${id}/cli.ts`),
  )
).flatMap(({ piece }) => piece);

const pairingList = z.object({
  requests: z.array(
    z.object({
      code: z.string(),
      accountId: z.string(),
      senderId: z.string(),
      senderName: z.string().nullish(),
      createdAt: z.string(),
      expiresAt: z.string(),
    }),
  ),
});
const pairingAction = z.object({
  ok: z.literal(true),
  channel: z.string(),
  accountId: z.string(),
  senderId: z.string(),
  ownerSet: z.boolean(),
});
const allowList = z.object({
  entries: z.array(
    z.object({
      accountId: z.string(),
      senderId: z.string(),
      source: z.string(),
      createdAt: z.string(),
    }),
  ),
});
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
const sessionShow = z.object({
  session: sessionRow,
  sandbox: sandboxReportSchema.optional(),
  transcript: z.array(
    z.object({ seq: z.number(), role: z.string(), content: z.unknown(), createdAt: z.string() }),
  ),
});
const agentsList = z.object({
  agents: z.array(
    z.object({
      id: z.string(),
      name: z.string().nullish(),
      default: z.boolean(),
      model: z.string().nullish(),
      bindings: z.array(z.unknown()),
    }),
  ),
});
const configReport = z.object({
  ok: z.boolean(),
  errors: z.array(z.string()),
  warnings: z.array(z.string()),
});

const enc = encodeURIComponent;
const query = (params: Record<string, string | boolean | undefined>) => {
  const entries = Object.entries(params).filter(
    (entry): entry is [string, string] => typeof entry[1] === "string",
  );
  return entries.length ? `?${new URLSearchParams(entries).toString()}` : "";
};

const pairingDecision = (action: "approve" | "reject"): CommandSpec => ({
  name: `pairing ${action}`,
  args: ["channel", "code"],
  options: {},
  summary:
    action === "approve"
      ? "approve a pairing code (grants the sender DM access)"
      : "drop a pending pairing request",
  async run({ args: [channel, code], connection, print }) {
    const json = await adminRequest(connection(), "POST", `/pairing/${enc(channel!)}/${action}`, {
      code,
    });
    const data = pairingAction.parse(json);
    print(json, () =>
      action === "approve"
        ? `Approved ${data.senderId} on ${data.channel} (account ${data.accountId}): DM access granted.${data.ownerSet ? " First approval: this sender is now the owner." : ""}`
        : `Rejected the request from ${data.senderId} on ${data.channel}.`,
    );
    return 0;
  },
});

export const COMMANDS: CommandSpec[] = [
  {
    name: "pairing list",
    args: ["channel"],
    options: { account: "id" },
    summary: "pending DM pairing requests",
    async run({ args: [channel], options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/pairing/${enc(channel!)}${query({ account: options.account })}`,
      );
      const data = pairingList.parse(json);
      print(json, () =>
        renderTable(
          ["CODE", "ACCOUNT", "SENDER", "NAME", "EXPIRES"],
          data.requests.map((r) => [r.code, r.accountId, r.senderId, r.senderName, r.expiresAt]),
        ),
      );
      return 0;
    },
  },
  pairingDecision("approve"),
  pairingDecision("reject"),
  {
    name: "allowlist list",
    args: ["channel"],
    options: { account: "id" },
    summary: "approved senders",
    async run({ args: [channel], options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/allowlist/${enc(channel!)}${query({ account: options.account })}`,
      );
      const data = allowList.parse(json);
      print(json, () =>
        renderTable(
          ["ACCOUNT", "SENDER", "SOURCE", "ADDED"],
          data.entries.map((e) => [e.accountId, e.senderId, e.source, e.createdAt]),
        ),
      );
      return 0;
    },
  },
  {
    name: "allowlist add",
    args: ["channel", "senderId"],
    options: { account: "id" },
    summary: "allow a sender",
    async run({ args: [channel, senderId], options, connection, print }) {
      const json = await adminRequest(connection(), "POST", `/allowlist/${enc(channel!)}`, {
        senderId,
        accountId: options.account,
      });
      print(json, () => `Added ${senderId} to the ${channel} allowlist.`);
      return 0;
    },
  },
  {
    name: "allowlist remove",
    args: ["channel", "senderId"],
    options: { account: "id" },
    summary: "remove a sender",
    async run({ args: [channel, senderId], options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "DELETE",
        `/allowlist/${enc(channel!)}/${enc(senderId!)}${query({ account: options.account })}`,
      );
      print(json, () => `Removed ${senderId} from the ${channel} allowlist.`);
      return 0;
    },
  },
  {
    name: "sessions list",
    args: [],
    options: { agent: "id", limit: "n" },
    summary: "sessions, most recent first",
    async run({ options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/sessions${query({ agent: options.agent, limit: options.limit })}`,
      );
      const data = sessionsList.parse(json);
      print(json, () =>
        renderTable(
          ["SESSION KEY", "AGENT", "CHANNEL", "TOKENS IN/OUT", "UPDATED"],
          data.sessions.map((s) => [
            s.sessionKey,
            s.agentId,
            s.channel,
            `${s.inputTokens}/${s.outputTokens}`,
            s.updatedAt,
          ]),
        ),
      );
      return 0;
    },
  },
  {
    name: "sessions show",
    args: ["key"],
    options: { limit: "n" },
    summary: "one session and its conversation, turn by turn",
    async run({ args: [key], options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/sessions/${enc(key!)}${query({ limit: options.limit })}`,
      );
      const data = sessionShow.parse(json);
      const s = data.session;
      print(json, () =>
        [
          `${s.sessionKey} — agent ${s.agentId}, session ${s.sessionId}, started ${s.sessionStartedAt}, tokens ${s.inputTokens} in / ${s.outputTokens} out`,
          ...formatSandbox(data.sandbox),
          "",
          ...(data.transcript.length ? formatTranscript(data.transcript) : ["(no turns yet)"]),
        ].join("\n"),
      );
      return 0;
    },
  },
  {
    name: "sessions reset",
    args: ["key"],
    options: {},
    summary: "reset a session now",
    async run({ args: [key], connection, print }) {
      const json = await adminRequest(connection(), "POST", `/sessions/${enc(key!)}/reset`);
      print(json, () => `Reset ${key}.`);
      return 0;
    },
  },
  {
    name: "agents list",
    args: [],
    options: {},
    summary: "configured agents, their models and bindings",
    async run({ connection, print }) {
      const json = await adminRequest(connection(), "GET", "/agents");
      const data = agentsList.parse(json);
      print(json, () =>
        renderTable(
          ["AGENT", "DEFAULT", "MODEL", "BINDINGS"],
          data.agents.map((a) => [a.id, a.default ? "yes" : "", a.model, a.bindings.length]),
        ),
      );
      return 0;
    },
  },
  {
    name: "config check",
    args: [],
    options: { file: "edgeclaw.json5" },
    summary: "check the gateway's config, or with --file a local file (offline)",
    async run({ options, connection, print }) {
      // A local file is checked here, with the gateway's own rules: no gateway needed.
      const json =
        typeof options.file === "string"
          ? checkConfig(readConfigFile(options.file), process.env)
          : await adminRequest(connection(), "GET", "/config/check");
      const data = configReport.parse(json);
      print(json, () =>
        [
          data.ok ? "config OK" : "config INVALID",
          ...data.errors.map((e) => `  error: ${e}`),
          ...data.warnings.map((w) => `  warning: ${w}`),
        ].join("\n"),
      );
      return data.ok ? 0 : 1;
    },
  },
  ...channelCommands,
  ...BUDGET_COMMANDS,
  ...MEMORY_COMMANDS,
  ...CRON_COMMANDS,
  ...AUDIT_COMMANDS,
  ...APPROVAL_COMMANDS,
  STATUS_COMMAND,
  ...ENV_COMMANDS,
  SIMULATE_COMMAND,
  DEPLOY_COMMAND,
];

/** A local config file, parsed (JSON5); the check reports every problem in it. */
function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(
      `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    return parseConfigText(text, file);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message);
    throw error;
  }
}
