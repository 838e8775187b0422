/**
 * Slack figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health          the do-nothing baseline
 *   POST /slack/events    signed Events API events: verify → parse → route → SessionDO.accept → 200,
 *                         each in its own (unlisted) channel, so access control drops it after the
 *                         durable accept and no agent run competes for the 2 cores: the ack path alone
 *   event → reply         one signed event at a time, timed until the reply lands in the fake Slack
 *                         Web API, with the in-Worker demo model (EDGECLAW_FAKE_MODEL=1, no network)
 * The Web API is test/fakes/slack-api.ts on loopback. Bounded counts; nothing leaves the machine.
 *   npx tsx scripts/bench/slack.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { parseArgs } from "node:util";
import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startFakeSlackApi } from "../../test/fakes/slack-api.ts";
import { startDevInstance } from "./lib/dev-instance.ts";
import { measure, printTable } from "./lib/measure.ts";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "400" }, concurrency: { type: "string", default: "8" }, replies: { type: "string", default: "20" } },
});
const requests = Math.min(5000, Number(values.requests));
const concurrency = Math.min(64, Number(values.concurrency));
const replies = Math.min(200, Number(values.replies));
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
      event: { type: "message", channel, channel_type: channelType, user: `U${run}${i}`, text: `bench ${i}`, ts: `1700000000.${String(i).padStart(6, "0")}` },
    });
  const post = async (body: string) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${instance.url}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-slack-request-timestamp": timestamp, "x-slack-signature": await signSlackRequest(signingSecret, timestamp, body) },
      body,
    });
    await res.arrayBuffer();
    return res.status === 200 && res.headers.get("x-openclaw-delivery-accepted") === "durable";
  };

  await measure("warm-up", 40, 4, (i) => post(event(1_000_000 + i, `DWARM${run}${i}`)));
  await measure("warm-up", 40, 4, async () => (await fetch(`${instance.url}/health`)).ok);

  const roundTrip = await measure("event → reply in Slack (demo model)", replies, 1, async (i) => {
    const channel = `D${run}R${i}`;
    if (!(await post(event(2_000_000 + i, channel)))) return false;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const messages = (await (await fetch(`${fakeSlack.url}/_control/messages?channel=${channel}`)).json()) as unknown[];
      if (messages.length > 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return false;
  });

  const baseline = await measure("GET /health (baseline)", requests, concurrency, async () => (await fetch(`${instance.url}/health`)).ok);
  const accepted = await measure("POST /slack/events (signed channel event, accept only)", requests, concurrency, (i) => post(event(i, `C${run}A${i}`, "channel")));

  console.log(`\nedgeclaw Slack benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`);
  printTable([baseline, accepted, roundTrip], baseline);
} finally {
  await instance.stop();
  await fakeSlack.stop();
}
