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
 * Microsoft (OpenID metadata, keys, token endpoint, Bot Connector) is functions/channels/msteams/simulate/msteams-api.ts on loopback.
 *   npx tsx functions/channels/msteams/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { FAKE_MSTEAMS_APP, startFakeMsTeamsApi } from "./msteams-api.ts";
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
  const refusals = new Refusals();
  // The Bot Framework reuses a token for many activities; a few are plenty.
  const tokens = await Promise.all(
    Array.from(
      { length: 8 },
      async () =>
        (
          (await (
            await fetch(`${fake.url}/_control/sign`, {
              method: "POST",
              body: JSON.stringify({ serviceUrl: fake.url }),
            })
          ).json()) as { token: string }
        ).token,
    ),
  );
  const activity = (i: number, conversation: string, personal: boolean) => ({
    type: "message",
    id: `1${run}${i}`,
    timestamp: new Date().toISOString(),
    serviceUrl: fake.url,
    channelId: "msteams",
    from: { id: `29:bench-${run}-${i}`, name: "Bench", aadObjectId: `bench-${run}-${i}` },
    recipient: { id: `28:${FAKE_MSTEAMS_APP.appId}`, name: "edgeclaw" },
    conversation: {
      id: conversation,
      conversationType: personal ? "personal" : "groupChat",
      tenantId: FAKE_MSTEAMS_APP.tenantId,
    },
    text: `bench ${i}`,
  });
  const post = async (i: number, body: unknown) => {
    return (
      (await refusals.send(`${instance.url}/api/messages`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${tokens[i % tokens.length]}`,
        },
        body: JSON.stringify(body),
      })) === 200
    );
  };
  const inGroup = (i: number) => post(i, activity(i, `19:bench${run}${i}@thread.v2`, false));

  await warmUp(instance.url, (i) => inGroup(1_000_000 + i));

  const roundTrip = await measure("event → reply in Teams (demo model)", replies, 1, async (i) => {
    const conversation = `a:bench${run}${i}`;
    if (!(await post(i, activity(2_000_000 + i, conversation, true)))) return false;
    return replyLands(async () => {
      const { activities } = (await (
        await fetch(
          `${fake.url}/_control/activities?conversation=${encodeURIComponent(conversation)}`,
        )
      ).json()) as { activities: Array<{ type: string }> };
      return activities.some((a) => a.type === "message");
    });
  });

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /api/messages (Bot Framework JWT, accept only)",
    requests,
    concurrency,
    (i) => inGroup(i),
  );

  console.log(
    `\nedgeclaw Microsoft Teams benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, roundTrip], baseline);
  refusals.print();
} finally {
  await instance.stop();
  await fake.stop();
}
