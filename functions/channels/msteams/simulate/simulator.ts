import { FAKE_MSTEAMS_APP, startFakeMsTeamsApi } from "./msteams-api.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedId } from "../../../../scripts/simulate/secrets.ts";

/**
 * Microsoft Teams played by the fake Microsoft (functions/channels/msteams/simulate/msteams-api.ts): OpenID metadata and
 * signing keys, the client-credentials token endpoint and the Bot Connector. The channel is pointed
 * at it with the fake's app id, tenant and client secret (the fake only issues tokens for those),
 * and the fake's origin joins the serviceUrl allowlist. Each webhook is an activity with a bearer
 * JWT the fake signs for the app and its serviceUrl, as the Bot Framework sends it. `--from` is an
 * AAD object id, `--group` a channel conversation id (`19:…@thread.tacv2`; without it a personal
 * chat), `--thread` the channel thread's root message id; `@edgeclaw` in a group's text is a mention.
 */
const DEFAULT_SENDER = "00000000-0000-4000-8000-00000000a11c";
const BOT_ID = `28:${FAKE_MSTEAMS_APP.appId}`;

const conversationOf = (message: SimulatedMessage) =>
  message.group ?? `a:sim-${(message.from ?? DEFAULT_SENDER).replace(/\W+/g, "-")}`;

export const simulator: WebhookSimulator = {
  id: "msteams",
  startFake: () => startFakeMsTeamsApi(),
  prepare(block, fakeUrl) {
    const own = block ?? {};
    const urls = {
      openIdMetadataUrl: `${fakeUrl}/botframework/v1/.well-known/openidconfiguration`,
      loginBaseUrl: `${fakeUrl}/login`,
      serviceUrlAllowlist: [fakeUrl],
    };
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, ...urls }]),
    );
    // The fake only issues tokens to its own app: the simulated block always uses it.
    const { appId: _a, appPassword: _p, tenantId: _t, ...rest } = own;
    void [_a, _p, _t];
    return {
      block: {
        enabled: true,
        ...rest,
        ...urls,
        appId: FAKE_MSTEAMS_APP.appId,
        tenantId: FAKE_MSTEAMS_APP.tenantId,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: { MSTEAMS_APP_PASSWORD: FAKE_MSTEAMS_APP.appPassword },
      secrets: {},
    };
  },
  async webhook(message, { webhookUrl, fakeUrl }) {
    const signed = await fetch(`${fakeUrl}/_control/sign`, {
      method: "POST",
      body: JSON.stringify({ serviceUrl: fakeUrl }),
    });
    const { token } = (await signed.json()) as { token: string };
    const aad = message.from ?? DEFAULT_SENDER;
    const conversation = conversationOf(message);
    const mentioned = !!message.group && /@edgeclaw\b/i.test(message.text);
    const text = mentioned
      ? message.text.replace(/@edgeclaw\b/gi, "<at>edgeclaw</at>")
      : message.text;
    const body = {
      type: "message",
      id: simulatedId("1"),
      timestamp: new Date().toISOString(),
      serviceUrl: fakeUrl,
      channelId: "msteams",
      from: { id: `29:${aad}`, name: "Simulated User", aadObjectId: aad },
      recipient: { id: BOT_ID, name: "edgeclaw" },
      conversation: {
        id:
          message.group && message.thread
            ? `${conversation};messageid=${message.thread}`
            : conversation,
        conversationType: message.group ? "channel" : "personal",
        tenantId: FAKE_MSTEAMS_APP.tenantId,
      },
      text,
      ...(mentioned
        ? {
            entities: [
              {
                type: "mention",
                text: "<at>edgeclaw</at>",
                mentioned: { id: BOT_ID, name: "edgeclaw" },
              },
            ],
          }
        : {}),
    };
    return new Request(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/activities?conversation=${encodeURIComponent(conversationOf(message))}`,
    );
    return ((await res.json()) as { activities: Array<{ type: string; text?: string }> }).activities
      .filter((a) => a.type === "message")
      .map((a) => a.text ?? "");
  },
};
