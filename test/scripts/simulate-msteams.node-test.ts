import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  msTeamsAccount,
  msTeamsChannelSchema,
  msTeamsCredentials,
} from "../../functions/channels/msteams/config.ts";
import { parseTeamsActivity } from "../../functions/channels/msteams/parse.ts";
import { verifyBotFrameworkToken } from "../../functions/channels/msteams/verify.ts";
import { sendTeamsMessage } from "../../functions/channels/msteams/send.ts";
import { msTeamsChannel } from "../../functions/channels/msteams/index.ts";
import { contextFor } from "../../functions/channels/channel-account.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { simulator as msTeamsSimulator } from "../../functions/channels/msteams/simulate/simulator.ts";

/** The Teams simulator: what it sends passes the Worker's own verify and parse, and the stack it prepares can reply. */
describe("msteams simulator", () => {
  it("sends activities the Worker verifies and parses (personal, channel with a mention), and reads replies back", async () => {
    const fake = await msTeamsSimulator.startFake();
    try {
      const prepared = msTeamsSimulator.prepare(undefined, fake.url, {});
      const account = msTeamsAccount(msTeamsChannelSchema.parse(prepared.block), "default");
      const credentials = msTeamsCredentials(account, prepared.env);
      assert.ok(!("error" in credentials));
      const target = {
        webhookUrl: "https://edgeclaw.local/api/messages",
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      };
      const parse = async (request: Request) => {
        const raw = new Uint8Array(await request.arrayBuffer());
        const serviceUrl = (JSON.parse(new TextDecoder().decode(raw)) as { serviceUrl: string })
          .serviceUrl;
        assert.deepEqual(
          await verifyBotFrameworkToken(
            request.headers.get("authorization"),
            serviceUrl,
            account,
            credentials,
          ),
          { ok: true },
        );
        const result = parseTeamsActivity(raw, account, Date.now());
        assert.ok("envelope" in result);
        return result.envelope;
      };
      const dm = await parse(await msTeamsSimulator.webhook({ text: "hello" }, target));
      assert.equal(dm.chatType, "direct");
      const channel = await parse(
        await msTeamsSimulator.webhook(
          { group: "19:team@thread.tacv2", thread: "1700", text: "@edgeclaw status" },
          target,
        ),
      );
      assert.equal(channel.chatType, "channel");
      assert.equal(channel.wasMentioned, true);
      assert.equal(channel.text, "status");
      assert.equal(channel.route.threadId, "1700");

      const config = parseConfig({ channels: { msteams: prepared.block } });
      const sent = await sendTeamsMessage(
        { id: "c1", route: dm.route, text: "Hi there", chunkIndex: 0, chunkCount: 1 },
        contextFor(msTeamsChannel, { env: prepared.env, config }, dm.route.accountId),
      );
      assert.equal(sent.ok, true);
      assert.deepEqual(await msTeamsSimulator.replies(fake.url, { text: "" }), ["Hi there"]);
    } finally {
      await fake.stop();
    }
  });
});
