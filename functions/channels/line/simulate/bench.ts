/**
 * LINE figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health           the do-nothing baseline
 *   POST /line/webhook     signed webhooks, one event each: verify → parse → route → SessionDO.accept →
 *                          200, each from its own (unlisted) group, so access control drops it after
 *                          the durable accept and no agent run competes for the 2 cores: the ack path
 *   POST /line/webhook ×5  the same with five events per request (LINE batches), counted per event
 *   event → reply          one signed 1:1 message at a time, timed until the reply (by reply token)
 *                          lands in the fake LINE API, with the in-Worker demo model (no network)
 * The Messaging API is functions/channels/line/simulate/line-api.ts on loopback. Bounded counts; nothing leaves the machine.
 *   npx tsx functions/channels/line/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { signLineBody } from "../verify.ts";
import { startFakeLineApi } from "./line-api.ts";
import { startDevInstance } from "../../../../scripts/bench/lib/dev-instance.ts";
import {
  benchArgs,
  healthBaseline,
  Refusals,
  replyLands,
  warmUp,
} from "../../../../scripts/bench/lib/channel-bench.ts";
import { measure, printTable } from "../../../../scripts/bench/lib/measure.ts";

const { requests, concurrency, replies } = benchArgs();
const channelSecret = "bench-channel-secret-not-for-production";
const BOT = `U${"be".repeat(16)}`;

const fakeLine = await startFakeLineApi();
const instance = await startDevInstance(
  {
    // One session per DM sender, so each measured event is its own conversation.
    session: { dmScope: "per-channel-peer" },
    channels: {
      line: {
        apiBaseUrl: fakeLine.url,
        dataApiBaseUrl: fakeLine.url,
        channelAccessToken: "line-token-bench",
        channelSecret,
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1" },
);

try {
  const run = Date.now().toString(16);
  /** Why requests failed (status and body), so a failure count is never a mystery. */
  const refusals = new Refusals();
  const id = (prefix: string, i: number) =>
    `${prefix}${`${run}${i.toString(16)}`.padStart(32, "0").slice(-32)}`;
  const event = (i: number, source: Record<string, string>, replyToken?: string) => ({
    type: "message",
    mode: "active",
    timestamp: Date.now(),
    source,
    webhookEventId: `01BENCH${run}${i}`,
    deliveryContext: { isRedelivery: false },
    ...(replyToken ? { replyToken } : {}),
    message: { type: "text", id: `${run}${i}`, quoteToken: `q${i}`, text: `bench ${i}` },
  });
  const post = async (events: unknown[]) => {
    const body = JSON.stringify({ destination: BOT, events });
    return (
      (await refusals.send(`${instance.url}/line/webhook`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-line-signature": await signLineBody(channelSecret, body),
        },
        body,
      })) === 200
    );
  };
  const inGroup = (i: number) =>
    event(i, { type: "group", groupId: id("C", i), userId: id("U", i) });

  await warmUp(instance.url, (i) => post([inGroup(1_000_000 + i)]));

  const roundTrip = await measure("event → reply in LINE (demo model)", replies, 1, async (i) => {
    const user = id("U", 2_000_000 + i);
    const token = `rt${run}${i}`;
    await fetch(`${fakeLine.url}/_control/reply-token`, {
      method: "POST",
      body: JSON.stringify({ replyToken: token, to: user }),
    });
    if (!(await post([event(2_000_000 + i, { type: "user", userId: user }, token)]))) return false;
    return replyLands(async () => {
      const messages = (await (
        await fetch(`${fakeLine.url}/_control/messages?to=${user}`)
      ).json()) as unknown[];
      return messages.length > 0;
    });
  });

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /line/webhook (signed, 1 event, accept only)",
    requests,
    concurrency,
    (i) => post([inGroup(i)]),
  );
  const batches = Math.max(1, Math.floor(requests / 5));
  const batched = await measure(
    "POST /line/webhook (signed, 5 events, accept only)",
    batches,
    concurrency,
    (i) => post(Array.from({ length: 5 }, (_, k) => inGroup(3_000_000 + i * 5 + k))),
  );

  console.log(
    `\nedgeclaw LINE benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, batched, roundTrip], baseline);
  console.log(`\n5-event requests: ${(batched.perSecond * 5).toFixed(0)} events/s accepted`);
  refusals.print();
} finally {
  await instance.stop();
  await fakeLine.stop();
}
