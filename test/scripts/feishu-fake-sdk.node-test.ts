import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as lark from "@larksuiteoapi/node-sdk";
import { startFakeFeishuApi } from "../../functions/channels/feishu/simulate/feishu-api.ts";

/**
 * The fake Open Platform (functions/channels/feishu/simulate/feishu-api.ts) driven by Feishu's own Node SDK, pointed at it
 * as a custom domain: the SDK's tenant token request, its CardKit calls (card.create,
 * cardElement.content, card.settings) and its IM message create / reply / delete reach the fake with
 * the paths, methods and bodies Feishu's SDK uses, and the fake answers in the shape the SDK reads.
 * So the streaming-card tests that run against the fake speak Feishu's wire format, not our guess.
 */

const APP = { appId: "cli_sdk_oracle", appSecret: "sdk-oracle-secret" };

describe("fake Feishu API against @larksuiteoapi/node-sdk", () => {
  it("serves the SDK's streaming card flow: create, send by card_id as a reply, stream text, end streaming, recall", async () => {
    const fake = await startFakeFeishuApi({ apps: { [APP.appId]: APP.appSecret } });
    try {
      const client = new lark.Client({
        appId: APP.appId,
        appSecret: APP.appSecret,
        domain: fake.url,
        loggerLevel: lark.LoggerLevel.fatal,
      });
      const card = {
        schema: "2.0",
        config: { streaming_mode: true, update_multi: true },
        body: { elements: [{ tag: "markdown", element_id: "answer", content: "Thinking" }] },
      };
      const created = await client.cardkit.v1.card.create({
        data: { type: "card_json", data: JSON.stringify(card) },
      });
      assert.equal(created.code, 0);
      const cardId = created.data?.card_id;
      assert.ok(cardId);

      await fetch(`${fake.url}/_control/message`, {
        method: "POST",
        body: JSON.stringify({ message_id: "om_user_1", chat_id: "oc_sdk" }),
      });
      const sent = await client.im.v1.message.reply({
        path: { message_id: "om_user_1" },
        data: {
          msg_type: "interactive",
          content: JSON.stringify({ type: "card", data: { card_id: cardId } }),
          uuid: "sdk-card-1",
        },
      });
      assert.equal(sent.code, 0);
      const messageId = sent.data?.message_id;
      assert.ok(messageId);

      for (const [sequence, content] of [
        [1, "Thinking about"],
        [2, "Thinking about it: done."],
      ] as const) {
        const streamed = await client.cardkit.v1.cardElement.content({
          path: { card_id: cardId, element_id: "answer" },
          data: { content, sequence, uuid: `c_${cardId}_${sequence}` },
        });
        assert.equal(streamed.code, 0);
      }
      const ended = await client.cardkit.v1.card.settings({
        path: { card_id: cardId },
        data: {
          settings: JSON.stringify({ config: { streaming_mode: false } }),
          sequence: 3,
          uuid: `s_${cardId}_3`,
        },
      });
      assert.equal(ended.code, 0);

      const shown = (await (
        await fetch(`${fake.url}/_control/messages?chat=oc_sdk`)
      ).json()) as Array<{
        message_id: string;
        text: string;
        streaming: boolean;
        msg_type: string;
      }>;
      assert.deepEqual(
        shown.map((m) => [m.message_id, m.msg_type, m.text, m.streaming]),
        [[messageId, "interactive", "Thinking about it: done.", false]],
      );
      const calls = (await (await fetch(`${fake.url}/_control/calls`)).json()) as Array<{
        api: string;
        status: number;
      }>;
      assert.deepEqual(
        calls.map((c) => [c.api, c.status]),
        [
          ["token", 200],
          ["card.create", 200],
          ["reply", 200],
          ["card.content", 200],
          ["card.content", 200],
          ["card.settings", 200],
        ],
      );

      // A stale sequence is refused, as Feishu refuses it; streaming ended refuses further text.
      await assert.rejects(
        client.cardkit.v1.cardElement.content({
          path: { card_id: cardId, element_id: "answer" },
          data: { content: "late", sequence: 2, uuid: "late-1" },
        }),
      );
      await assert.rejects(
        client.cardkit.v1.cardElement.content({
          path: { card_id: cardId, element_id: "answer" },
          data: { content: "late", sequence: 9, uuid: "late-2" },
        }),
      );

      const recalled = await client.im.v1.message.delete({ path: { message_id: messageId } });
      assert.equal(recalled.code, 0);
      assert.deepEqual(await (await fetch(`${fake.url}/_control/messages?chat=oc_sdk`)).json(), []);
    } finally {
      await fake.stop();
    }
  });
});
