import { signSlackRequest } from "../verify.ts";
import { startFakeSlackApi } from "./slack-api.ts";
import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedId, simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Slack played by the fake Web API (functions/channels/slack/simulate/slack-api.ts): Events API `event_callback`s signed
 * with the v0 scheme (HMAC-SHA256 over `v0:<timestamp>:<body>`), replies read back from the
 * messages the fake stored. The fake's bot is UBOTTEST in team TTEST; mention it as <@UBOTTEST>.
 * An account in Socket Mode (`mode: "socket"`) gets the same event as an `events_api` envelope on
 * the WebSocket the companion opened with apps.connections.open (the same fake serves both).
 */
const TEAM = "TTEST";
const BOT_USER = "UBOTTEST";
const DEFAULT_SENDER = "U0SIMUSER";

function conversationOf(message: SimulatedMessage): string {
  return message.group ?? `D${(message.from ?? DEFAULT_SENDER).replace(/^U/, "")}`;
}

export const simulator: WebhookSimulator = {
  id: "slack",
  startFake: () => startFakeSlackApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const apiBaseUrl = `${fakeUrl}/api/`;
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, apiBaseUrl }]),
    );
    const signing = simulatedSecret(own.signingSecret, "SLACK_SIGNING_SECRET", env);
    const bot = simulatedSecret(own.botToken, "SLACK_BOT_TOKEN", env, "xoxb-sim-");
    // The app-level token only Socket Mode needs (the companion opens the connection with it).
    const app =
      own.mode === "socket"
        ? simulatedSecret(own.appToken, "SLACK_APP_TOKEN", env, "xapp-sim-")
        : { add: {} };
    return {
      block: { ...own, apiBaseUrl, ...(Object.keys(accounts).length ? { accounts } : {}) },
      env: { ...signing.add, ...bot.add, ...app.add },
      secrets: { signingSecret: signing.value },
    };
  },
  async webhook(message, { webhookUrl, secrets }) {
    const body = JSON.stringify(eventCallback(message));
    const timestamp = String(Math.floor(Date.now() / 1000));
    return new Request(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": await signSlackRequest(secrets.signingSecret!, timestamp, body),
      },
      body,
    });
  },
  socket: {
    async deliver(message, { fakeUrl, deadline }) {
      const payload = eventCallback(message);
      const envelope = {
        envelope_id: simulatedId("env-"),
        type: "events_api",
        accepts_response_payload: false,
        retry_attempt: 0,
        retry_reason: "",
        payload,
      };
      await untilConnected(
        "Slack",
        "the companion has not opened Socket Mode on the simulated Slack",
        deadline,
        async () => {
          const res = await fetch(`${fakeUrl}/_control/socket-envelope`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ envelope }),
          });
          await res.body?.cancel();
          if (res.status === 409) return false;
          if (!res.ok) throw new Error(`the simulated Slack answered ${res.status}`);
          return true;
        },
      );
      // The companion's outbox key for an events_api envelope (functions/channels/slack/companion/connector.ts).
      return { eventId: `event:${payload.event_id}` };
    },
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/messages?channel=${encodeURIComponent(conversationOf(message))}`,
    );
    const stored = (await res.json()) as Array<{
      ts: string;
      text: string;
      thread_ts?: string;
      deleted?: boolean;
    }>;
    return stored
      .filter((m) => !m.deleted && (!message.thread || m.thread_ts === message.thread))
      .map((m) => `${m.thread_ts ? `[thread ${m.thread_ts}] ` : ""}${unescapeSlack(m.text)}`);
  },
};

/** The Events API body Slack sends for a message, over HTTP or inside a Socket Mode envelope. */
function eventCallback(message: SimulatedMessage) {
  const ts = `${Math.floor(Date.now() / 1000)}.${String(Date.now() % 1_000_000).padStart(6, "0")}`;
  return {
    token: "simulated",
    team_id: TEAM,
    api_app_id: "A0SIM",
    type: "event_callback",
    event_id: simulatedId("Ev"),
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: null,
        team_id: TEAM,
        user_id: BOT_USER,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    event: {
      type: "message",
      channel: conversationOf(message),
      channel_type: message.group ? "channel" : "im",
      user: message.from ?? DEFAULT_SENDER,
      text: message.text,
      ts,
      event_ts: ts,
      ...(message.thread ? { thread_ts: message.thread } : {}),
    },
  };
}

/** What Slack's client shows for mrkdwn's three escapes. */
function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
