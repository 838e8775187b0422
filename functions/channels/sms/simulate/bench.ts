/**
 * Twilio SMS figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health          the do-nothing baseline
 *   POST /webhooks/sms    signed incoming-message webhooks: verify X-Twilio-Signature → parse →
 *                         route → SessionDO.accept → empty TwiML, each from its own number that is
 *                         not in allowFrom (dmPolicy "allowlist"), so access control drops it after
 *                         the durable accept and no agent run competes for the 2 cores: the ack path
 *   event → reply         one signed SMS at a time from an allowlisted number, timed until the reply
 *                         lands in the fake Twilio Messages API, with the in-Worker demo model
 *                         (EDGECLAW_FAKE_MODEL=1, no network)
 * The REST API is functions/channels/sms/simulate/twilio-api.ts on loopback. Bounded counts; nothing leaves the machine.
 *   npx tsx functions/channels/sms/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { signTwilioRequest } from "../verify.ts";
import { startFakeTwilioApi } from "./twilio-api.ts";
import { startDevInstance } from "../../../../scripts/bench/lib/dev-instance.ts";
import {
  benchArgs,
  healthBaseline,
  replyLands,
  warmUp,
} from "../../../../scripts/bench/lib/channel-bench.ts";
import { measure, printTable } from "../../../../scripts/bench/lib/measure.ts";

const { requests, concurrency, replies } = benchArgs();
const accountSid = `AC${"b".repeat(32)}`;
const authToken = "bench-twilio-auth-token-not-for-production";
const fromNumber = "+15550009000";
const talkers = Array.from({ length: replies }, (_, i) => `+1555099${String(i).padStart(4, "0")}`);

const fakeTwilio = await startFakeTwilioApi({ accounts: { [accountSid]: authToken } });
const instance = await startDevInstance(
  {
    // One session per sender, so each measured SMS is its own conversation (under the default
    // dmScope "main" every DM would queue behind the others in the agent's main session).
    session: { dmScope: "per-channel-peer" },
    channels: {
      sms: {
        accountSid,
        authToken,
        fromNumber,
        apiBaseUrl: fakeTwilio.url,
        dmPolicy: "allowlist",
        allowFrom: talkers,
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1" },
);

try {
  const run = Date.now().toString(16);
  const messageSid = (i: number) => `SM${run}${i.toString(16)}`.padEnd(34, "0").slice(0, 34);
  const post = async (i: number, from: string) => {
    const url = `${instance.url}/webhooks/sms`;
    const params: Array<[string, string]> = [
      ["MessageSid", messageSid(i)],
      ["SmsSid", messageSid(i)],
      ["AccountSid", accountSid],
      ["From", from],
      ["To", fromNumber],
      ["Body", `bench ${i}`],
      ["NumMedia", "0"],
      ["NumSegments", "1"],
      ["SmsStatus", "received"],
      ["ApiVersion", "2010-04-01"],
    ];
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": await signTwilioRequest(authToken, url, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    const body = await res.text();
    return (
      res.status === 200 &&
      res.headers.get("x-openclaw-delivery-accepted") === "durable" &&
      body.includes("<Response>")
    );
  };

  await warmUp(instance.url, (i) => post(1_000_000 + i, `+1888${String(i).padStart(7, "0")}`));

  const roundTrip = await measure("SMS → reply in Twilio (demo model)", replies, 1, async (i) => {
    const from = talkers[i]!;
    if (!(await post(2_000_000 + i, from))) return false;
    return replyLands(async () => {
      const messages = (await (
        await fetch(`${fakeTwilio.url}/_control/messages?to=${encodeURIComponent(from)}`)
      ).json()) as unknown[];
      return messages.length > 0;
    });
  });

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /webhooks/sms (signed SMS, accept only)",
    requests,
    concurrency,
    (i) => post(i, `+1777${String(i).padStart(7, "0")}`),
  );

  console.log(
    `\nedgeclaw Twilio SMS benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, roundTrip], baseline);
} finally {
  await instance.stop();
  await fakeTwilio.stop();
}
