import { encryptFeishu, signFeishuRequest } from "../crypto.ts";
import { startFakeFeishuApi } from "./feishu-api.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedId, simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Feishu / Lark played by the fake Open Platform (functions/channels/feishu/simulate/feishu-api.ts), in webhook mode: each
 * event is a schema 2.0 `im.message.receive_v1`, encrypted with the Encrypt Key and signed with
 * X-Lark-Signature exactly as Feishu sends it, for a user message the fake then holds (so the
 * answer goes out by the reply API). The app (id, secret) is registered with the fake's token
 * endpoint before the first event. `--from` is an open_id (ou_…), `--group` a chat id (oc_…; without
 * it the message is a p2p chat), `--thread` a thread id; `@edgeclaw` in a group's text is a mention
 * of the bot. Replies are read back as the plain text of the posts the fake received, and of
 * streaming cards once their streaming has ended.
 */
const DEFAULT_SENDER = "ou_sim0000000000000000000000000001";
const SIM_BOT = "ou_simbot000000000000000000000000";

const chatOf = (message: SimulatedMessage) =>
  message.group
    ? message.group.startsWith("oc_")
      ? message.group
      : `oc_${message.group}`
    : `oc_p2p_${(message.from ?? DEFAULT_SENDER).replace(/\W+/g, "")}`;

export const simulator: WebhookSimulator = {
  id: "feishu",
  startFake: () => startFakeFeishuApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, apiBaseUrl: fakeUrl }]),
    );
    const appId =
      typeof own.appId === "string"
        ? own.appId
        : (env.FEISHU_APP_ID ?? `cli_sim${simulatedId("").toLowerCase()}`);
    const appSecret = simulatedSecret(own.appSecret, "FEISHU_APP_SECRET", env);
    const encryptKey = simulatedSecret(own.encryptKey, "FEISHU_ENCRYPT_KEY", env);
    const token = simulatedSecret(own.verificationToken, "FEISHU_VERIFICATION_TOKEN", env);
    const botOpenId = typeof own.botOpenId === "string" ? own.botOpenId : SIM_BOT;
    return {
      block: {
        ...own,
        connectionMode: "webhook",
        apiBaseUrl: fakeUrl,
        appId,
        botOpenId,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: { ...appSecret.add, ...encryptKey.add, ...token.add },
      secrets: {
        appId,
        appSecret: appSecret.value,
        encryptKey: encryptKey.value,
        verificationToken: token.value,
        botOpenId,
      },
    };
  },
  async webhook(message, { webhookUrl, secrets, fakeUrl }) {
    await fetch(`${fakeUrl}/_control/app`, {
      method: "POST",
      body: JSON.stringify({ app_id: secrets.appId, app_secret: secrets.appSecret }),
    });
    const chatId = chatOf(message);
    const messageId = `om_${simulatedId("sim").toLowerCase()}`;
    await fetch(`${fakeUrl}/_control/message`, {
      method: "POST",
      body: JSON.stringify({ message_id: messageId, chat_id: chatId }),
    });
    const mentioned = !!message.group && /@edgeclaw\b/i.test(message.text);
    const text = mentioned ? message.text.replace(/@edgeclaw\b/gi, "@_user_1") : message.text;
    const event = {
      schema: "2.0",
      header: {
        event_id: `ev_${simulatedId("sim").toLowerCase()}`,
        event_type: "im.message.receive_v1",
        create_time: String(Date.now()),
        token: secrets.verificationToken,
        app_id: secrets.appId,
        tenant_key: "sim",
      },
      event: {
        sender: {
          sender_id: { open_id: message.from ?? DEFAULT_SENDER },
          sender_type: "user",
          tenant_key: "sim",
        },
        message: {
          message_id: messageId,
          root_id: message.thread ? `om_${message.thread}` : "",
          parent_id: "",
          ...(message.thread
            ? {
                thread_id: message.thread.startsWith("omt_")
                  ? message.thread
                  : `omt_${message.thread}`,
              }
            : {}),
          chat_id: chatId,
          chat_type: message.group ? "group" : "p2p",
          message_type: "text",
          content: JSON.stringify({ text }),
          mentions: mentioned
            ? [{ key: "@_user_1", id: { open_id: secrets.botOpenId }, name: "edgeclaw" }]
            : [],
          create_time: String(Date.now()),
        },
      },
    };
    const raw = JSON.stringify({
      encrypt: await encryptFeishu(secrets.encryptKey!, JSON.stringify(event)),
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = simulatedId("n");
    return new Request(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json; charset=utf-8",
        "x-lark-request-timestamp": timestamp,
        "x-lark-request-nonce": nonce,
        "x-lark-signature": await signFeishuRequest(timestamp, nonce, secrets.encryptKey!, raw),
      },
      body: raw,
    });
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/messages?chat=${encodeURIComponent(chatOf(message))}`,
    );
    // A streaming card still growing is not a reply yet: it counts once committed (streaming ended).
    return ((await res.json()) as Array<{ text: string; streaming?: boolean }>)
      .filter((m) => m.streaming !== true)
      .map((m) => m.text);
  },
};
