import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startFakeSlackApi } from "./fakes/slack-api.ts";
import type { ChannelSimulator, SimulatedMessage } from "./simulator.ts";
import { simulatedId, simulatedSecret } from "./secrets.ts";

/**
 * Slack played by the fake Web API (scripts/simulate/fakes/slack-api.ts): Events API `event_callback`s signed
 * with the v0 scheme (HMAC-SHA256 over `v0:<timestamp>:<body>`), replies read back from the
 * messages the fake stored. The fake's bot is UBOTTEST in team TTEST; mention it as <@UBOTTEST>.
 */
const TEAM = "TTEST";
const BOT_USER = "UBOTTEST";
const DEFAULT_SENDER = "U0SIMUSER";

function conversationOf(message: SimulatedMessage): string {
  return message.group ?? `D${(message.from ?? DEFAULT_SENDER).replace(/^U/, "")}`;
}

export const slackSimulator: ChannelSimulator = {
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
    return {
      block: { ...own, apiBaseUrl, ...(Object.keys(accounts).length ? { accounts } : {}) },
      env: { ...signing.add, ...bot.add },
      secrets: { signingSecret: signing.value },
    };
  },
  async webhook(message, { webhookUrl, secrets }) {
    const ts = `${Math.floor(Date.now() / 1000)}.${String(Date.now() % 1_000_000).padStart(6, "0")}`;
    const body = JSON.stringify({
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
    });
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

/** What Slack's client shows for mrkdwn's three escapes. */
function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
