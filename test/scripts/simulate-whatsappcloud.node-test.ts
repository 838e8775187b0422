import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  whatsappCloudAccount,
  whatsappCloudChannelSchema,
} from "../../functions/channels/whatsappcloud/config.ts";
import { sendWhatsAppCloud } from "../../functions/channels/whatsappcloud/send.ts";
import { simulator } from "../../functions/channels/whatsappcloud/simulate/simulator.ts";
import { whatsappCloudWebhook } from "../../functions/channels/whatsappcloud/webhook.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";

/**
 * The WhatsApp Cloud simulator: what it sends passes the Worker's own verify and parse, and a reply
 * the channel sends to the fake Graph API reads back as WhatsApp got it.
 */
describe("whatsappcloud simulator", () => {
  it("points every account at the fake and generates the secrets it signs with", () => {
    const fresh = simulator.prepare(
      { accounts: { biz: { phoneNumberId: "2" } } },
      "http://127.0.0.1:9",
      {},
    );
    assert.equal(fresh.block.graphApiBaseUrl, "http://127.0.0.1:9");
    assert.equal(
      (fresh.block.accounts as Record<string, { graphApiBaseUrl: string }>).biz!.graphApiBaseUrl,
      "http://127.0.0.1:9",
    );
    assert.equal(fresh.env.WHATSAPP_CLOUD_APP_SECRET, fresh.secrets.appSecret);
    assert.match(fresh.env.WHATSAPP_CLOUD_ACCESS_TOKEN!, /^wa-token-sim-[0-9a-f]{32}$/);
    assert.ok(fresh.env.WHATSAPP_CLOUD_VERIFY_TOKEN);
  });

  it("sends a webhook the Worker verifies and parses, and shows the reply sent back", async () => {
    const fake = await simulator.startFake();
    try {
      const prepared = simulator.prepare(undefined, fake.url, {});
      const root = whatsappCloudChannelSchema.parse(prepared.block);
      const [route] = whatsappCloudWebhook.routes(root);
      assert.ok(route);
      const message = { from: "+15557654321", text: "hello from the simulator" };
      const request = await simulator.webhook!(message, {
        webhookUrl: `https://edgeclaw.local${route.path}`,
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      });
      const webhookRequest = {
        method: "POST",
        url: request.url,
        path: route.path,
        headers: request.headers,
        raw: new Uint8Array(await request.arrayBuffer()),
        receivedAt: Date.now(),
      };
      assert.deepEqual(await whatsappCloudWebhook.verify(webhookRequest, route, prepared.env), {
        ok: true,
      });
      const parsed = await whatsappCloudWebhook.parse(webhookRequest, route, prepared.env);
      assert.ok(parsed.kind === "envelopes");
      const [envelope] = parsed.envelopes;
      assert.equal(envelope?.senderId, "+15557654321");
      assert.equal(envelope?.text, "hello from the simulator");

      const sent = await sendWhatsAppCloud(
        {
          id: "chunk-1",
          route: envelope!.route,
          text: "**hi** back",
          chunkIndex: 0,
          chunkCount: 1,
        },
        {
          env: prepared.env,
          config: {} as EdgeclawConfig,
          account: whatsappCloudAccount(root, "default"),
        },
      );
      assert.equal(sent.ok, true);
      assert.deepEqual(await simulator.replies(fake.url, message), ["*hi* back"]);
    } finally {
      await fake.stop();
    }
  });
});
