/**
 * Microsoft Teams figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health         the do-nothing baseline
 *   POST /api/messages   activities with a Bot Framework JWT the fake Microsoft signed: verify (RS256
 *                        against the cached OpenID key set, serviceUrl claim) → parse → route →
 *                        SessionDO.accept → 200, each from its own unlisted group chat, so access
 *                        control drops it after the durable accept and no agent run competes for the
 *                        2 cores: the ack path
 *   event → reply        one personal chat at a time, timed until the answer shows in the fake Bot
 *                        Connector (client-credentials token, typing activity first), demo model
 * Microsoft (OpenID metadata, keys, token endpoint, Bot Connector) is test/fakes/msteams-api.ts on loopback.
 *   npx tsx scripts/bench/msteams.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { parseArgs } from "node:util";
import { FAKE_MSTEAMS_APP, startFakeMsTeamsApi } from "../../test/fakes/msteams-api.ts";
import { startDevInstance } from "./lib/dev-instance.ts";
import { measure, printTable } from "./lib/measure.ts";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "400" }, concurrency: { type: "string", default: "8" }, replies: { type: "string", default: "20" } },
});
const requests = Math.min(5000, Number(values.requests));
const concurrency = Math.min(64, Number(values.concurrency));
const replies = Math.min(200, Number(values.replies));

const fake = await startFakeMsTeamsApi();
const instance = await startDevInstance(
  {
    session: { dmScope: "per-channel-peer" },
    channels: {
      msteams: {
        enabled: true,
        appId: FAKE_MSTEAMS_APP.appId,
        tenantId: FAKE_MSTEAMS_APP.tenantId,
        // Named, so `npm run dev` passes the variable to the Worker (it passes only named secrets).
        appPassword: { source: "env", id: "MSTEAMS_APP_PASSWORD" },
        openIdMetadataUrl: `${fake.url}/botframework/v1/.well-known/openidconfiguration`,
        loginBaseUrl: `${fake.url}/login`,
        serviceUrlAllowlist: [fake.url],
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1", MSTEAMS_APP_PASSWORD: FAKE_MSTEAMS_APP.appPassword },
);

try {
  const run = Date.now().toString(36);
  const refusals = new Map<string, number>();
  // The Bot Framework reuses a token for many activities; a few are plenty.
  const tokens = await Promise.all(
    Array.from({ length: 8 }, async () => ((await (await fetch(`${fake.url}/_control/sign`, { method: "POST", body: JSON.stringify({ serviceUrl: fake.url }) })).json()) as { token: string }).token),
  );
  const activity = (i: number, conversation: string, personal: boolean) => ({
    type: "message",
    id: `1${run}${i}`,
    timestamp: new Date().toISOString(),
    serviceUrl: fake.url,
    channelId: "msteams",
    from: { id: `29:bench-${run}-${i}`, name: "Bench", aadObjectId: `bench-${run}-${i}` },
    recipient: { id: `28:${FAKE_MSTEAMS_APP.appId}`, name: "edgeclaw" },
    conversation: { id: conversation, conversationType: personal ? "personal" : "groupChat", tenantId: FAKE_MSTEAMS_APP.tenantId },
    text: `bench ${i}`,
  });
  const post = async (i: number, body: unknown) => {
    const note = (reason: string) => refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
    try {
      const res = await fetch(`${instance.url}/api/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tokens[i % tokens.length]}` },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) note(`${res.status} ${text.slice(0, 120)}`);
      return res.status === 200;
    } catch (error) {
      note(`no answer: ${error instanceof Error ? error.message : String(error)}`.slice(0, 160));
      return false;
    }
  };
  const inGroup = (i: number) => post(i, activity(i, `19:bench${run}${i}@thread.v2`, false));

  await measure("warm-up", 40, 4, (i) => inGroup(1_000_000 + i));
  await measure("warm-up", 40, 4, async () => (await fetch(`${instance.url}/health`)).ok);

  const roundTrip = await measure("event → reply in Teams (demo model)", replies, 1, async (i) => {
    const conversation = `a:bench${run}${i}`;
    if (!(await post(i, activity(2_000_000 + i, conversation, true)))) return false;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const { activities } = (await (await fetch(`${fake.url}/_control/activities?conversation=${encodeURIComponent(conversation)}`)).json()) as { activities: Array<{ type: string }> };
      if (activities.some((a) => a.type === "message")) return true;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return false;
  });

  const baseline = await measure("GET /health (baseline)", requests, concurrency, async () => (await fetch(`${instance.url}/health`)).ok);
  const accepted = await measure("POST /api/messages (Bot Framework JWT, accept only)", requests, concurrency, (i) => inGroup(i));

  console.log(`\nedgeclaw Microsoft Teams benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`);
  printTable([baseline, accepted, roundTrip], baseline);
  for (const [reason, count] of refusals) console.log(`refused ×${count}: ${reason}`);
} finally {
  await instance.stop();
  await fake.stop();
}
