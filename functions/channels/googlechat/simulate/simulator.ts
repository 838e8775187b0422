import { startFakeGoogleChatApi } from "./googlechat-api.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedId } from "../../../../scripts/simulate/secrets.ts";

/**
 * Google Chat played by the fake Google (functions/channels/googlechat/simulate/googlechat-api.ts): its key sets, token
 * exchange and Chat API. The channel is pointed at it with the fake's service account key (in
 * GOOGLE_CHAT_SERVICE_ACCOUNT) and, when the block sets no
 * audience, `app-url` with a simulated endpoint URL. Each webhook is an interaction event with a
 * bearer token the fake Google signs for that audience, exactly as Google Chat sends it. `--from` is
 * a user (`users/…`), `--group` a space (`spaces/…`; without it the message is a DM), `--thread` a
 * thread name; `@edgeclaw` in a space's text is a mention of the app. Replies are read back from the
 * fake Chat API (placeholders deleted or edited away are not shown).
 *
 * The simulated stack always uses the fake's service account (GOOGLE_CHAT_SERVICE_ACCOUNT): the fake
 * only honours token requests signed by it. A real key in the env is left alone outside simulation.
 */
const SIM_AUDIENCE = "https://edgeclaw.local/googlechat";
const BOT_USER = "users/edgeclaw-sim-app";
const DEFAULT_SENDER = "users/100000000000000000001";
const serviceAccounts = new Map<string, string>();

const spaceOf = (message: SimulatedMessage) =>
  message.group
    ? message.group.startsWith("spaces/")
      ? message.group
      : `spaces/${message.group}`
    : `spaces/dm-${(message.from ?? DEFAULT_SENDER).replace(/\W+/g, "-")}`;
const userOf = (message: SimulatedMessage) =>
  message.from
    ? message.from.startsWith("users/")
      ? message.from
      : `users/${message.from}`
    : DEFAULT_SENDER;

export const simulator: WebhookSimulator = {
  id: "googlechat",
  async startFake() {
    const fake = await startFakeGoogleChatApi();
    serviceAccounts.set(fake.url, fake.serviceAccountJson);
    return fake;
  },
  prepare(block, fakeUrl) {
    const own = block ?? {};
    const urls = {
      apiBaseUrl: `${fakeUrl}/`,
      tokenUrl: `${fakeUrl}/token`,
      oidcJwksUrl: `${fakeUrl}/oauth2/v3/certs`,
      chatJwksUrl: `${fakeUrl}/service_accounts/v1/metadata/jwk/chat@system.gserviceaccount.com`,
    };
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, ...urls }]),
    );
    const audienceType = typeof own.audienceType === "string" ? own.audienceType : "app-url";
    const audience = typeof own.audience === "string" ? own.audience : SIM_AUDIENCE;
    // The fake only accepts assertions signed by its own service account, so the block uses it.
    const { serviceAccount: _ignored, ...rest } = own;
    void _ignored;
    return {
      block: {
        ...rest,
        ...urls,
        audienceType,
        audience,
        botUser: typeof own.botUser === "string" ? own.botUser : BOT_USER,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      // Always the fake's key: the simulated Google only honours assertions it can verify.
      env: { GOOGLE_CHAT_SERVICE_ACCOUNT: serviceAccounts.get(fakeUrl) ?? "" },
      secrets: { audienceType, audience },
    };
  },
  async webhook(message, { webhookUrl, secrets, fakeUrl }) {
    const signed = await fetch(`${fakeUrl}/_control/sign`, {
      method: "POST",
      body: JSON.stringify({ audienceType: secrets.audienceType, audience: secrets.audience }),
    });
    const { token } = (await signed.json()) as { token: string };
    const space = spaceOf(message);
    const sender = { name: userOf(message), displayName: "Simulated User", type: "HUMAN" };
    const mentioned = !!message.group && /@edgeclaw\b/i.test(message.text);
    const body = {
      type: "MESSAGE",
      eventTime: new Date().toISOString(),
      space: {
        name: space,
        type: message.group ? "ROOM" : "DM",
        spaceType: message.group ? "SPACE" : "DIRECT_MESSAGE",
        singleUserBotDm: !message.group,
      },
      user: sender,
      message: {
        name: `${space}/messages/${simulatedId("sim")}`,
        sender,
        text: message.text,
        ...(mentioned
          ? {
              argumentText: message.text.replace(/@edgeclaw\b/gi, "").trim(),
              annotations: [
                {
                  type: "USER_MENTION",
                  userMention: { user: { name: BOT_USER, type: "BOT" }, type: "MENTION" },
                },
              ],
            }
          : {}),
        thread: {
          name: message.thread
            ? message.thread.includes("/threads/")
              ? message.thread
              : `${space}/threads/${message.thread}`
            : `${space}/threads/${simulatedId("t")}`,
        },
      },
    };
    return new Request(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/messages?space=${encodeURIComponent(spaceOf(message))}`,
    );
    return ((await res.json()) as { messages: Array<{ text: string; deleted: boolean }> }).messages
      .filter((m) => !m.deleted)
      .map((m) => m.text);
  },
};
