/**
 * Feishu / Lark figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health          the do-nothing baseline
 *   POST /feishu/events   events encrypted (AES-256-CBC) and signed (X-Lark-Signature) as Feishu sends
 *                         them: verify → decrypt → parse → route → SessionDO.accept → 200, each a group
 *                         message from its own unlisted chat, so access control drops it after the
 *                         durable accept and no agent run competes for the 2 cores: the ack path
 *   forged                the same requests with a signature made without the Encrypt Key: 401 each
 *   event → reply         one DM at a time, timed until the answer is committed in Feishu (the streaming
 *                         card's streaming ended, or a post), with the in-Worker demo model (no network)
 * Feishu (tenant token, IM and CardKit APIs) is functions/channels/feishu/simulate/feishu-api.ts on loopback.
 *   npx tsx functions/channels/feishu/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { encryptFeishu, signFeishuRequest } from "../crypto.ts";
import { startFakeFeishuApi } from "./feishu-api.ts";
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

const APP = {
  appId: "cli_bench",
  appSecret: "bench-app-secret",
  encryptKey: "bench-encrypt-key",
  verificationToken: "bench-verification-token",
};
const BOT = "ou_benchbot000000000000000000000000";

const fake = await startFakeFeishuApi({ apps: { [APP.appId]: APP.appSecret } });
const instance = await startDevInstance(
  {
    session: { dmScope: "per-channel-peer" },
    channels: {
      feishu: {
        connectionMode: "webhook",
        apiBaseUrl: fake.url,
        appId: APP.appId,
        // Named, so `npm run dev` passes the variables to the Worker (it passes only named secrets).
        appSecret: { source: "env", id: "FEISHU_APP_SECRET" },
        encryptKey: { source: "env", id: "FEISHU_ENCRYPT_KEY" },
        verificationToken: { source: "env", id: "FEISHU_VERIFICATION_TOKEN" },
        botOpenId: BOT,
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  },
  {
    EDGECLAW_FAKE_MODEL: "1",
    FEISHU_APP_SECRET: APP.appSecret,
    FEISHU_ENCRYPT_KEY: APP.encryptKey,
    FEISHU_VERIFICATION_TOKEN: APP.verificationToken,
  },
);

try {
  const run = Date.now().toString(36);
  const refusals = new Refusals();
  const event = (i: number, chat: string, p2p: boolean) => ({
    schema: "2.0",
    header: {
      event_id: `ev_${run}_${i}`,
      event_type: "im.message.receive_v1",
      create_time: String(Date.now()),
      token: APP.verificationToken,
      app_id: APP.appId,
      tenant_key: "bench",
    },
    event: {
      sender: {
        sender_id: { open_id: `ou_bench${run}${i}` },
        sender_type: "user",
        tenant_key: "bench",
      },
      message: {
        message_id: `om_${run}_${i}`,
        chat_id: chat,
        chat_type: p2p ? "p2p" : "group",
        message_type: "text",
        content: JSON.stringify({ text: `bench ${i}` }),
        mentions: [],
      },
    },
  });
  /** Posts `body` as Feishu would; `forged` signs with a guessed key. Returns the HTTP status (0: no answer). */
  const post = async (body: unknown, forged = false): Promise<number> => {
    const raw = JSON.stringify({
      encrypt: await encryptFeishu(APP.encryptKey, JSON.stringify(body)),
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = Math.random().toString(36).slice(2);
    return refusals.send(`${instance.url}/feishu/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json; charset=utf-8",
        "x-lark-request-timestamp": timestamp,
        "x-lark-request-nonce": nonce,
        "x-lark-signature": await signFeishuRequest(
          timestamp,
          nonce,
          forged ? "guessed-key" : APP.encryptKey,
          raw,
        ),
      },
      body: raw,
    });
  };
  const inGroup = async (i: number) => (await post(event(i, `oc_bench${run}${i}`, false))) === 200;

  await warmUp(instance.url, (i) => inGroup(1_000_000 + i));

  const roundTrip = await measure("event → reply in Feishu (demo model)", replies, 1, async (i) => {
    const chat = `oc_dm${run}${i}`;
    const messageId = `om_${run}_${2_000_000 + i}`;
    await fetch(`${fake.url}/_control/message`, {
      method: "POST",
      body: JSON.stringify({ message_id: messageId, chat_id: chat }),
    });
    if ((await post(event(2_000_000 + i, chat, true))) !== 200) return false;
    return replyLands(async () => {
      const messages = (await (
        await fetch(`${fake.url}/_control/messages?chat=${chat}`)
      ).json()) as Array<{ msg_type: string; streaming?: boolean }>;
      return messages.some((m) => m.msg_type === "post" || m.streaming === false);
    });
  });

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /feishu/events (decrypt + signature, accept only)",
    requests,
    concurrency,
    (i) => inGroup(i),
  );
  const beforeForged = refusals.total;
  const forged = await measure(
    "POST /feishu/events forged signature (401 expected)",
    requests,
    concurrency,
    async (i) => (await post(event(3_000_000 + i, `oc_forged${run}${i}`, false), true)) === 401,
  );
  const refusedForged = refusals.total - beforeForged;

  console.log(
    `\nedgeclaw Feishu benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, forged, roundTrip], baseline);
  console.log(`\nforged requests refused: ${refusedForged} of ${requests}`);
  refusals.print();
} finally {
  await instance.stop();
  await fake.stop();
}
