import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  googleChatAccount,
  googleChatChannelSchema,
} from "../../functions/channels/googlechat/config.ts";
import { parseGoogleChatEvent } from "../../functions/channels/googlechat/parse.ts";
import { verifyGoogleChatToken } from "../../functions/channels/googlechat/verify.ts";
import { forgetGoogleKeySets } from "../../functions/channels/googlechat/keys.ts";
import { chatAccessToken } from "../../functions/channels/googlechat/token.ts";
import { serviceAccountKeySchema } from "../../functions/channels/googlechat/config.ts";
import { simulator as googleChatSimulator } from "../../functions/channels/googlechat/simulate/simulator.ts";

/** The Google Chat simulator: what it sends passes the Worker's own verify and parse, and the stack it prepares can get a token. */
describe("googlechat simulator", () => {
  it("sends events the Worker verifies and parses (DM, space with a mention), and reads replies back", async () => {
    const fake = await googleChatSimulator.startFake();
    try {
      forgetGoogleKeySets();
      const prepared = googleChatSimulator.prepare(undefined, fake.url, {});
      const account = googleChatAccount(googleChatChannelSchema.parse(prepared.block), "default");
      const target = {
        webhookUrl: "https://edgeclaw.local/googlechat",
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      };
      const parse = async (request: Request) => {
        assert.deepEqual(
          await verifyGoogleChatToken(request.headers.get("authorization"), account),
          { ok: true },
        );
        const result = parseGoogleChatEvent(
          new Uint8Array(await request.arrayBuffer()),
          account,
          Date.now(),
        );
        assert.ok("envelope" in result);
        return result.envelope;
      };
      const dm = await parse(await googleChatSimulator.webhook({ text: "hello" }, target));
      assert.equal(dm.chatType, "direct");
      const space = await parse(
        await googleChatSimulator.webhook(
          { group: "spaces/TEAM", text: "@edgeclaw status" },
          target,
        ),
      );
      assert.equal(space.chatType, "group");
      assert.equal(space.wasMentioned, true);
      assert.equal(space.text, "status");

      // The stack it prepares gets an app token with the fake's service account and can post.
      const key = serviceAccountKeySchema.parse(
        JSON.parse(prepared.env.GOOGLE_CHAT_SERVICE_ACCOUNT!),
      );
      const token = await chatAccessToken(key, account.tokenUrl);
      assert.ok(token.ok);
      const posted = await fetch(`${fake.url}/v1/${dm.route.to}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "Hi there" }),
      });
      assert.equal(posted.status, 200);
      assert.deepEqual(await googleChatSimulator.replies(fake.url, { text: "" }), ["Hi there"]);
    } finally {
      await fake.stop();
    }
  });
});
