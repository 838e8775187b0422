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
 * The REST API is test/fakes/twilio-api.ts on loopback. Bounded counts; nothing leaves the machine.
 *   npx tsx scripts/bench/sms.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { parseArgs } from "node:util";
import { signTwilioRequest } from "../../functions/channels/sms/verify.ts";
import { startFakeTwilioApi } from "../../test/fakes/twilio-api.ts";
import { startDevInstance } from "./lib/dev-instance.ts";
import { measure, printTable } from "./lib/measure.ts";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "400" }, concurrency: { type: "string", default: "8" }, replies: { type: "string", default: "20" } },
});
const requests = Math.min(5000, Number(values.requests));
const concurrency = Math.min(64, Number(values.concurrency));
const replies = Math.min(200, Number(values.replies));
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
    channels: { sms: { accountSid, authToken, fromNumber, apiBaseUrl: fakeTwilio.url, dmPolicy: "allowlist", allowFrom: talkers } },
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
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": await signTwilioRequest(authToken, url, params) },
      body: new URLSearchParams(params).toString(),
    });
    const body = await res.text();
    return res.status === 200 && res.headers.get("x-openclaw-delivery-accepted") === "durable" && body.includes("<Response>");
  };

  await measure("warm-up", 40, 4, (i) => post(1_000_000 + i, `+1888${String(i).padStart(7, "0")}`));
  await measure("warm-up", 40, 4, async () => (await fetch(`${instance.url}/health`)).ok);

  const roundTrip = await measure("SMS → reply in Twilio (demo model)", replies, 1, async (i) => {
    const from = talkers[i]!;
    if (!(await post(2_000_000 + i, from))) return false;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const messages = (await (await fetch(`${fakeTwilio.url}/_control/messages?to=${encodeURIComponent(from)}`)).json()) as unknown[];
      if (messages.length > 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return false;
  });

  const baseline = await measure("GET /health (baseline)", requests, concurrency, async () => (await fetch(`${instance.url}/health`)).ok);
  const accepted = await measure("POST /webhooks/sms (signed SMS, accept only)", requests, concurrency, (i) => post(i, `+1777${String(i).padStart(7, "0")}`));

  console.log(`\nedgeclaw Twilio SMS benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`);
  printTable([baseline, accepted, roundTrip], baseline);
} finally {
  await instance.stop();
  await fakeTwilio.stop();
}
