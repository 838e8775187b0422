import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  feishuAccount,
  feishuChannelSchema,
  feishuSecrets,
} from "../../functions/channels/feishu/config.ts";
import { parseFeishuBody } from "../../functions/channels/feishu/parse.ts";
import { verifyFeishuRequest } from "../../functions/channels/feishu/verify.ts";
import { simulator as feishuSimulator } from "../../functions/channels/feishu/simulate/simulator.ts";

/** The Feishu simulator: what it sends passes the Worker's own verify and parse; replies read back from the fake. */
describe("feishu simulator", () => {
  it("sends encrypted, signed events the Worker verifies and parses (p2p, group with a mention)", async () => {
    const fake = await feishuSimulator.startFake();
    try {
      const prepared = feishuSimulator.prepare(undefined, fake.url, {});
      assert.equal(prepared.block.connectionMode, "webhook");
      const account = feishuAccount(feishuChannelSchema.parse(prepared.block), "default");
      const secrets = feishuSecrets(account, prepared.env);
      const target = {
        webhookUrl: "https://edgeclaw.local/feishu/events",
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      };
      const parse = async (request: Request) => {
        const raw = new Uint8Array(await request.arrayBuffer());
        const verified = await verifyFeishuRequest(
          { raw, headers: request.headers, receivedAt: Date.now() },
          secrets,
          300,
        );
        assert.ok(verified.ok, JSON.stringify(verified));
        const result = parseFeishuBody(verified.body, {
          account,
          botOpenId: secrets.botOpenId,
          receivedAt: Date.now(),
        });
        assert.equal(result.kind, "envelopes");
        return (
          result as { envelopes: Array<{ chatType: string; wasMentioned?: boolean; text: string }> }
        ).envelopes[0]!;
      };
      const dm = await parse(await feishuSimulator.webhook({ text: "hello" }, target));
      assert.equal(dm.chatType, "direct");
      const group = await parse(
        await feishuSimulator.webhook({ group: "team", text: "@edgeclaw status" }, target),
      );
      assert.equal(group.chatType, "group");
      assert.equal(group.wasMentioned, true);
      assert.match(group.text, /status/);
      assert.deepEqual(await feishuSimulator.replies(fake.url, { text: "" }), []);
    } finally {
      await fake.stop();
    }
  });
});
