import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { channelDefinition } from "../../../functions/channels/registry.ts";
import type { SocketAccount } from "../../../functions/channels/channel.ts";
import { configFromEnv, parseConfig } from "../../../functions/channels/gateway-config.ts";
import {
  allSocketAccounts,
  findSocketAccount,
} from "../../../functions/channels/companion/socket-accounts.ts";
import { webhookRouteTable } from "../../../functions/channels/webhook-routes.ts";
import {
  BOT_USER,
  messageEvent,
  newScenario,
  postSigned,
  scriptModel,
  slackCalls,
  slackMessages,
  TEAM,
  uniqueId,
  waitFor,
} from "./helpers.ts";
import { postCompanionEvent, storedOutcomes } from "../companion-events.ts";

/**
 * Slack Socket Mode, Worker side: the companion forwards each Socket Mode envelope unchanged and the
 * Worker parses its `payload` exactly as a Request URL body, so one event delivered over both
 * transports is stored once and answered once, and every access rule applies unchanged.
 */

const workerEnv = env as unknown as Env;
const socket = channelDefinition("slack")!.socket!;
const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function socketAccount(accountId = "sock"): SocketAccount {
  const account = findSocketAccount(
    configFromEnv(workerEnv),
    workerEnv,
    "slack",
    accountId,
  )?.account;
  if (!account) throw new Error(`no socket account ${accountId}`);
  return account;
}

const COMPANION_KEY = { id: "sockmm", secret: "test-companion-sockmm-secret" };

/**
 * One Socket Mode envelope the way the companion's Slack connector hands it on: a signed
 * POST /internal/companion/events (the Worker parses it and accepts it durably). `parsed` is the
 * same parse run locally, for the dedup keys.
 */
async function deliverOverSocket(envelope: Record<string, unknown>) {
  const event = { eventId: String(envelope.envelope_id), payload: envelope };
  const parsed = await socket.parse(
    { ...event, receivedAt: Date.now() },
    socketAccount(),
    workerEnv,
  );
  if (parsed.kind !== "envelopes") throw new Error(`socket parse gave ${parsed.kind}`);
  const result = await postCompanionEvent(COMPANION_KEY, "slack", "sock", event);
  return { parsed, outcomes: storedOutcomes(result).map((status) => ({ status })) };
}

const eventsApi = (body: string) => ({
  envelope_id: uniqueId("env-"),
  type: "events_api",
  accepts_response_payload: false,
  retry_attempt: 0,
  payload: JSON.parse(body),
});

describe("Slack Socket Mode (Worker side)", () => {
  it("lists only mode:socket accounts for the companion, with the app token's env name and never its value", () => {
    const accounts = allSocketAccounts(configFromEnv(workerEnv), workerEnv)
      .filter(({ definition }) => definition.id === "slack")
      .map(({ account }) => account);
    expect(accounts.map((a) => a.accountId)).toEqual(["sock"]);
    expect(accounts[0]!.connector).toEqual({
      settings: { apiBaseUrl: expect.stringMatching(/\/api\/$/) },
      secretEnv: { appToken: "TEST_SLACK_APP_TOKEN" },
    });
    expect(JSON.stringify(accounts[0]!.connector)).not.toContain("xoxb-");
    // …and the socket account has no Request URL.
    const routes = [...webhookRouteTable(configFromEnv(workerEnv)).values()]
      .filter(({ definition }) => definition.id === "slack")
      .map(({ route }) => route.accountId);
    expect(routes).not.toContain("sock");
  });

  it("falls back to SLACK_APP_TOKEN for the default account only", () => {
    const own = parseConfig({
      channels: { slack: { mode: "socket", accounts: { default: {}, other: {} } } },
    });
    const accounts = allSocketAccounts(own, workerEnv).map(({ account }) => account);
    expect(accounts.map((a) => [a.accountId, a.connector.secretEnv])).toEqual([
      ["default", { appToken: "SLACK_APP_TOKEN" }],
      ["other", {}],
    ]);
  });

  it("an event Slack delivers over the socket and the Request URL is stored once and answered once", async () => {
    const scenario = newScenario("slack-socket-both");
    await scriptModel(scenario, [{ type: "text", text: "One answer." }]);
    const channel = uniqueId("C0SOCK");
    const body = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "channel",
      type: "app_mention",
      text: `<@${BOT_USER}> hello [scenario:${scenario}]`,
      ts: nowTs(),
    });

    const overSocket = await deliverOverSocket(eventsApi(body));
    expect(overSocket.outcomes.map((o) => o.status)).toEqual(["accepted"]);
    const http = await postSigned(body);
    expect(http.status).toBe(200);
    expect(http.headers.get("x-edgeclaw-ingest")).toBe("duplicate");
    const again = await deliverOverSocket(eventsApi(body)); // Slack redelivers an envelope whose ack it missed
    expect(again.outcomes.map((o) => o.status)).toEqual(["duplicate"]);
    expect(overSocket.parsed.envelopes[0]!.dedupKey).toBe(again.parsed.envelopes[0]!.dedupKey);

    await waitFor(
      async () =>
        (await slackMessages(channel)).some((m) => m.text === "One answer.") ? true : undefined,
      20_000,
    );
    await settle(1500);
    expect((await slackMessages(channel)).filter((m) => !m.deleted).map((m) => m.text)).toEqual([
      "One answer.",
    ]);
    const posts = await slackCalls("chat.postMessage", channel);
    expect(posts.every((p) => p.token === "…ault")).toBe(true); // the account's bot token (inherited), not the app token
  });

  it("slash commands and interactive payloads get the same dedup keys as over HTTP", async () => {
    const account = socketAccount();
    const trigger = uniqueId("trig");
    const command = {
      command: "/openclaw",
      text: "status",
      team_id: TEAM,
      channel_id: uniqueId("C"),
      user_id: "UHUMAN1",
      user_name: "ana",
      response_url: "https://hooks.slack.test/r/1",
      trigger_id: trigger,
    };
    const slash = await socket.parse(
      {
        eventId: "e1",
        payload: { envelope_id: "e1", type: "slash_commands", payload: command },
        receivedAt: 1,
      },
      account,
      workerEnv,
    );
    expect(slash.kind === "envelopes" && slash.envelopes.map((e) => e.dedupKey)).toEqual([
      `slack:${TEAM}:slash:${trigger}`,
    ]);

    const click = {
      type: "block_actions",
      team: { id: TEAM },
      user: { id: "UHUMAN1" },
      channel: { id: "C0X" },
      trigger_id: trigger,
      actions: [{ action_id: "approve", value: "yes" }],
    };
    const interactive = await socket.parse(
      {
        eventId: "e2",
        payload: { envelope_id: "e2", type: "interactive", payload: click },
        receivedAt: 1,
      },
      account,
      workerEnv,
    );
    expect(
      interactive.kind === "envelopes" && interactive.envelopes.map((e) => [e.kind, e.dedupKey]),
    ).toEqual([["system", `slack:${TEAM}:interaction:${trigger}`]]);
  });

  it("drops what is not an event (hello, disconnect), and refuses a payload that is not Slack's shape", async () => {
    const account = socketAccount();
    const hello = await socket.parse(
      { eventId: "h", payload: { type: "hello", num_connections: 1 }, receivedAt: 1 },
      account,
      workerEnv,
    );
    expect(hello).toMatchObject({ kind: "envelopes", envelopes: [] });
    const forged = await socket.parse(
      {
        eventId: "x",
        payload: { type: "events_api", envelope_id: "x", payload: { type: "event_callback" } },
        receivedAt: 1,
      },
      account,
      workerEnv,
    );
    expect(forged.kind).toBe("malformed");
    expect(
      (await socket.parse({ eventId: "y", payload: "not json", receivedAt: 1 }, account, workerEnv))
        .kind,
    ).toBe("malformed");
  });

  it("a stranger's unmentioned channel message over the socket starts nothing (mention gating unchanged)", async () => {
    const scenario = newScenario("slack-socket-gated");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    const channel = uniqueId("C0GATE");
    const body = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "channel",
      user: "USTRANGER",
      text: `hello all [scenario:${scenario}]`,
      ts: nowTs(),
    });
    const delivered = await deliverOverSocket(eventsApi(body));
    expect(delivered.outcomes.map((o) => o.status)).toEqual(["accepted"]);
    await settle(2500);
    expect(await slackMessages(channel)).toEqual([]);
  });
});
