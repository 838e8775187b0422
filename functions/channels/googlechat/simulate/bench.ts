/**
 * Google Chat figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health         the do-nothing baseline
 *   POST /googlechat     events with a bearer token the fake Google signed: verify (RS256 against the
 *                        cached key set) → parse → route → SessionDO.accept → {}, each from its own
 *                        unlisted space, so access control drops it after the durable accept and no
 *                        agent run competes for the 2 cores: the ack path
 *   event → reply        one DM at a time, timed until the answer (typing placeholder edited into it)
 *                        shows in the fake Chat API, with the in-Worker demo model (no network)
 * Google (keys, token exchange, Chat API) is functions/channels/googlechat/simulate/googlechat-api.ts on loopback.
 *   npx tsx functions/channels/googlechat/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { startFakeGoogleChatApi } from "./googlechat-api.ts";
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
const AUDIENCE = "https://edgeclaw.bench/googlechat";

const fake = await startFakeGoogleChatApi();
const instance = await startDevInstance(
  {
    session: { dmScope: "per-channel-peer" },
    channels: {
      googlechat: {
        apiBaseUrl: `${fake.url}/`,
        tokenUrl: `${fake.url}/token`,
        oidcJwksUrl: `${fake.url}/oauth2/v3/certs`,
        chatJwksUrl: `${fake.url}/service_accounts/v1/metadata/jwk/chat@system.gserviceaccount.com`,
        audienceType: "app-url",
        audience: AUDIENCE,
        // Named, so `npm run dev` passes the variable to the Worker (it passes only named secrets).
        serviceAccount: { source: "env", id: "GOOGLE_CHAT_SERVICE_ACCOUNT" },
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1", GOOGLE_CHAT_SERVICE_ACCOUNT: fake.serviceAccountJson },
);

try {
  const run = Date.now().toString(36);
  const refusals = new Refusals();
  // Google signs a token per request; a few are plenty, reused as Google's are (valid for an hour).
  const tokens = await Promise.all(
    Array.from(
      { length: 8 },
      async () =>
        (
          (await (
            await fetch(`${fake.url}/_control/sign`, {
              method: "POST",
              body: JSON.stringify({ audienceType: "app-url", audience: AUDIENCE }),
            })
          ).json()) as { token: string }
        ).token,
    ),
  );
  const event = (i: number, space: string, dm: boolean) => {
    const sender = { name: `users/bench-${run}-${i}`, displayName: "Bench", type: "HUMAN" };
    return {
      type: "MESSAGE",
      eventTime: new Date().toISOString(),
      space: { name: space, type: dm ? "DM" : "ROOM", spaceType: dm ? "DIRECT_MESSAGE" : "SPACE" },
      user: sender,
      message: {
        name: `${space}/messages/m${run}${i}`,
        sender,
        text: `bench ${i}`,
        thread: { name: `${space}/threads/t${i}` },
      },
    };
  };
  const post = async (i: number, body: unknown) => {
    return (
      (await refusals.send(`${instance.url}/googlechat`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${tokens[i % tokens.length]}`,
        },
        body: JSON.stringify(body),
      })) === 200
    );
  };
  const inSpace = (i: number) => post(i, event(i, `spaces/bench${run}${i}`, false));

  await warmUp(instance.url, (i) => inSpace(1_000_000 + i));

  const roundTrip = await measure(
    "event → reply in Google Chat (demo model)",
    replies,
    1,
    async (i) => {
      const space = `spaces/dm${run}${i}`;
      if (!(await post(i, event(2_000_000 + i, space, true)))) return false;
      return replyLands(async () => {
        const { messages } = (await (
          await fetch(`${fake.url}/_control/messages?space=${space}`)
        ).json()) as { messages: Array<{ text: string; deleted: boolean }> };
        return messages.some((m) => !m.deleted && !m.text.startsWith("_Typing"));
      });
    },
  );

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /googlechat (bearer JWT, accept only)",
    requests,
    concurrency,
    (i) => inSpace(i),
  );

  console.log(
    `\nedgeclaw Google Chat benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, roundTrip], baseline);
  refusals.print();
} finally {
  await instance.stop();
  await fake.stop();
}
