import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lineAccount, lineChannelSchema } from "../../functions/channels/line/config.ts";
import { envelopeFromLineEvent, parseLineBody } from "../../functions/channels/line/parse.ts";
import { verifyLineSignature } from "../../functions/channels/line/verify.ts";
import { simulator as lineSimulator } from "../../functions/channels/line/simulate/simulator.ts";

/** The LINE simulator: what it sends passes the Worker's own verify and parse; replies read back as LINE shows them. */
describe("line simulator", () => {
  it("points every account at the fake, generates the secrets it signs with, and keeps given ones", () => {
    const fresh = lineSimulator.prepare(
      { accounts: { biz: { webhookPath: "/line/biz" } } },
      "http://127.0.0.1:9",
      {},
    );
    assert.equal(fresh.block.apiBaseUrl, "http://127.0.0.1:9");
    assert.equal(fresh.block.dataApiBaseUrl, "http://127.0.0.1:9");
    assert.equal(
      (fresh.block.accounts as Record<string, { apiBaseUrl: string }>).biz!.apiBaseUrl,
      "http://127.0.0.1:9",
    );
    assert.equal(fresh.env.LINE_CHANNEL_SECRET, fresh.secrets.channelSecret);
    assert.match(fresh.env.LINE_CHANNEL_ACCESS_TOKEN!, /^line-token-sim-[0-9a-f]{32}$/);
    const kept = lineSimulator.prepare(
      { channelSecret: { source: "env", id: "MY_LINE_SECRET" } },
      "http://127.0.0.1:9",
      { MY_LINE_SECRET: "given", LINE_CHANNEL_ACCESS_TOKEN: "tok" },
    );
    assert.deepEqual(kept.env, {});
    assert.equal(kept.secrets.channelSecret, "given");
  });

  it("sends webhooks the Worker verifies and parses (DM, group with a mention), and shows the fake's replies", async () => {
    const fake = await lineSimulator.startFake();
    try {
      const prepared = lineSimulator.prepare(undefined, fake.url, {});
      const account = lineAccount(lineChannelSchema.parse(prepared.block), "default");
      const target = {
        webhookUrl: "https://edgeclaw.local/line/webhook",
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      };
      const parse = async (request: Request) => {
        const raw = new Uint8Array(await request.arrayBuffer());
        assert.deepEqual(
          await verifyLineSignature(
            raw,
            request.headers.get("x-line-signature"),
            prepared.env.LINE_CHANNEL_SECRET,
          ),
          { ok: true },
        );
        const body = parseLineBody(raw);
        assert.ok(body.kind === "events");
        const result = envelopeFromLineEvent(body.events[0]!, {
          account,
          destination: body.destination,
          receivedAt: Date.now(),
        });
        assert.ok("envelope" in result);
        return result.envelope;
      };

      const dm = await parse(await lineSimulator.webhook({ text: "hello" }, target));
      assert.equal(dm.chatType, "direct");
      const group = await parse(
        await lineSimulator.webhook({ group: "team", text: "@edgeclaw status @alice" }, target),
      );
      assert.equal(group.chatType, "group");
      assert.match(group.peerId, /^C[0-9a-f]{32}$/);
      assert.equal(group.wasMentioned, true);
      assert.equal(group.text, "status @alice");
      const unmentioned = await parse(
        await lineSimulator.webhook({ group: "team", text: "@alice hi" }, target),
      );
      assert.equal(unmentioned.wasMentioned, false);

      // The Worker's answer to the DM, by its reply token, reads back as LINE shows it.
      const token = prepared.env.LINE_CHANNEL_ACCESS_TOKEN!;
      const res = await fetch(`${fake.url}/v2/bot/message/reply`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({
          replyToken: dm.route.extra!.replyToken,
          messages: [{ type: "text", text: "Hi there" }],
        }),
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await lineSimulator.replies(fake.url, { text: "" }), ["Hi there"]);
      assert.deepEqual(await lineSimulator.replies(fake.url, { group: "team", text: "" }), []);
    } finally {
      await fake.stop();
    }
  });
});
