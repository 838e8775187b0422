/**
 * Slack figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health          the do-nothing baseline
 *   POST /slack/events    signed Events API events: verify → parse → route → SessionDO.accept → 200,
 *                         each in its own (unlisted) channel, so access control drops it after the
 *                         durable accept and no agent run competes for the 2 cores: the ack path alone
 *   event → reply         one signed event at a time, timed until the reply lands in the fake Slack
 *                         Web API, with the in-Worker demo model (EDGECLAW_FAKE_MODEL=1, no network)
 * The Web API is functions/channels/slack/simulate/slack-api.ts on loopback. Bounded counts; nothing leaves the machine.
 *   npx tsx functions/channels/slack/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { signSlackRequest } from "../verify.ts";
import { startFakeSlackApi } from "./slack-api.ts";
import { startDevInstance } from "../../../../scripts/bench/lib/dev-instance.ts";
import {
  benchArgs,
  healthBaseline,
  replyLands,
  warmUp,
} from "../../../../scripts/bench/lib/channel-bench.ts";
import { measure, printTable } from "../../../../scripts/bench/lib/measure.ts";

const { requests, concurrency, replies } = benchArgs();
const signingSecret = "bench-signing-secret-not-for-production";

const fakeSlack = await startFakeSlackApi();
const instance = await startDevInstance(
  {
    // One session per DM sender, so each measured event is its own conversation (under the default
    // dmScope "main" every DM would queue behind the others in the agent's main session).
    session: { dmScope: "per-channel-peer" },
    channels: {
      slack: {
        mode: "http",
        apiBaseUrl: `${fakeSlack.url}/api/`,
        botToken: "xoxb-bench",
        signingSecret,
        dmPolicy: "open",
        allowFrom: ["*"],
        streaming: { mode: "off" },
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1" },
);

try {
  const run = Date.now().toString(36).toUpperCase();
  const event = (i: number, channel: string, channelType = "im") =>
    JSON.stringify({
      type: "event_callback",
      team_id: "TBENCH",
      api_app_id: "ABENCH",
      event_id: `Ev${run}${i}`,
      event_time: Math.floor(Date.now() / 1000),
      event: {
        type: "message",
        channel,
        channel_type: channelType,
        user: `U${run}${i}`,
        text: `bench ${i}`,
        ts: `1700000000.${String(i).padStart(6, "0")}`,
      },
    });
  const post = async (body: string) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${instance.url}/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": await signSlackRequest(signingSecret, timestamp, body),
      },
      body,
    });
    await res.arrayBuffer();
    return res.status === 200 && res.headers.get("x-openclaw-delivery-accepted") === "durable";
  };

  await warmUp(instance.url, (i) => post(event(1_000_000 + i, `DWARM${run}${i}`)));

  const roundTrip = await measure("event → reply in Slack (demo model)", replies, 1, async (i) => {
    const channel = `D${run}R${i}`;
    if (!(await post(event(2_000_000 + i, channel)))) return false;
    return replyLands(async () => {
      const messages = (await (
        await fetch(`${fakeSlack.url}/_control/messages?channel=${channel}`)
      ).json()) as unknown[];
      return messages.length > 0;
    });
  });

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /slack/events (signed channel event, accept only)",
    requests,
    concurrency,
    (i) => post(event(i, `C${run}A${i}`, "channel")),
  );

  console.log(
    `\nedgeclaw Slack benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, roundTrip], baseline);
} finally {
  await instance.stop();
  await fakeSlack.stop();
}
