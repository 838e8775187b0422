import { describe, expect, it } from "vitest";
import { UNDELIVERED_NOTICE } from "../../../durable-objects/session/outbox/deliver-due.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  forgetPairingWhenDone,
  groupChat,
  mentionEntity,
  messageUpdate,
  newScenario,
  postUpdate,
  privateChat,
  scriptModel,
  scriptTelegram,
  serveTelegramFile,
  settle,
  telegramCalls,
  telegramMessages,
  TEST_TELEGRAM,
  uniqueUserId,
  visibleMessages,
  waitFor,
} from "./helpers.ts";

/**
 * Update → Worker → durable accept in the SessionDO → agent run against the fake model → reply
 * through the fake Bot API, with the defaults a user gets (pairing DMs, streaming "progress",
 * replyToMode off, groups mention-gated). The "partial" account covers the streamed preview.
 */

const MENTION = `@${TEST_TELEGRAM.botUsername}`;

/** Waits until the chat shows exactly `texts` (visible, in order), then checks it stays so. */
async function settlesTo(
  chatId: string | number,
  texts: string[],
  thread?: (m: { message_thread_id?: number }) => boolean,
) {
  const visible = async () => (await visibleMessages(chatId)).filter((m) => !thread || thread(m));
  // Generous: every DM of the suite (all channels) shares the main session (dmScope "main"), one run at a time.
  await waitFor(
    async () =>
      JSON.stringify((await visible()).map((m) => m.text)) === JSON.stringify(texts)
        ? true
        : undefined,
    45_000,
  ).catch(async () => {
    throw new Error(
      `chat shows ${JSON.stringify((await visible()).map((m) => m.text))}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  const messages = await visible();
  expect(messages.map((m) => m.text)).toEqual(texts);
  return messages;
}

function toolThenAnswer(answer: string) {
  return [
    { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }] },
    { type: "text", text: answer },
  ];
}

describe("Telegram end to end", { timeout: 60_000 }, () => {
  it("answers an allowed DM once, in HTML, even when Telegram delivers the update three times", async () => {
    const scenario = newScenario("tg-dm");
    await scriptModel(scenario, toolThenAnswer("All **good** & <fine>."));
    const user = TEST_TELEGRAM.allowed[0]!;
    const update = messageUpdate({
      from: { id: user },
      chat: privateChat(user),
      text: `status please [scenario:${scenario}]`,
    });
    const deliveries = await Promise.all([
      postUpdate(update),
      postUpdate(update),
      postUpdate(update),
    ]);
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(deliveries.map((r) => r.headers.get("x-openclaw-delivery-accepted"))).toEqual([
      "durable",
      "durable",
      "durable",
    ]);
    expect(deliveries.map((r) => r.headers.get("x-edgeclaw-ingest")).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);

    const [reply] = await settlesTo(user, ["All good & <fine>."]);
    expect(reply!.raw).toBe("All <b>good</b> &amp; &lt;fine&gt;.");
    expect(reply!.parse_mode).toBe("HTML");
    expect(reply!.reply_to_message_id).toBeUndefined(); // replyToMode "off"
    // Progress mode (the default) may show a status draft while the tool runs; it is gone at the end.
    const all = await telegramMessages(user);
    expect(all.filter((m) => !m.deleted)).toHaveLength(1);
    expect(all.filter((m) => m.deleted).every((m) => m.text.startsWith("Working…"))).toBe(true);
    expect((await telegramCalls("sendChatAction", user)).length).toBeGreaterThan(0); // typing while it works
    expect(await recorded(scenario)).toHaveLength(2); // one run: the tool round and the answer
  });

  it("waits out a 429 on the first sendMessage for retry_after, then posts once", async () => {
    const scenario = newScenario("tg-429");
    await scriptModel(scenario, [{ type: "text", text: "Posted after the flood wait." }]);
    const user = TEST_TELEGRAM.allowed[1]!;
    await scriptTelegram({ method: "sendMessage", chatId: user, status: 429, retryAfter: 2 });
    const res = await postUpdate(
      messageUpdate({
        from: { id: user },
        chat: privateChat(user),
        text: `hi [scenario:${scenario}]`,
      }),
    );
    expect(res.status).toBe(200);

    await settlesTo(user, ["Posted after the flood wait."]);
    const posts = await telegramCalls("sendMessage", user);
    expect(posts).toHaveLength(2); // refused, then the one that landed
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(2000);
  });

  it("sends the plain text when Telegram cannot parse the HTML", async () => {
    const scenario = newScenario("tg-entities");
    await scriptModel(scenario, [{ type: "text", text: "Fallback **works**." }]);
    const user = TEST_TELEGRAM.allowed[2]!;
    await scriptTelegram({
      method: "sendMessage",
      chatId: user,
      status: 400,
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "b" at byte offset 9',
    });
    await postUpdate(
      messageUpdate({
        from: { id: user },
        chat: privateChat(user),
        text: `hi [scenario:${scenario}]`,
      }),
    );
    const [reply] = await settlesTo(user, ["Fallback **works**."]);
    expect(reply!.parse_mode).toBeUndefined();
  });

  it("streams the answer into one preview that the final answer edits (partial), not two messages", async () => {
    const scenario = newScenario("tg-partial");
    const answer = "A long streamed answer. ".repeat(20).trim();
    await scriptModel(scenario, toolThenAnswer(answer));
    const user = TEST_TELEGRAM.allowed[3]!;
    await postUpdate(
      messageUpdate({
        from: { id: user },
        chat: privateChat(user),
        text: `stream please [scenario:${scenario}]`,
      }),
      {
        path: "/telegram-webhook/partial",
        secret: TEST_TELEGRAM.partialWebhookSecret,
      },
    );
    const [reply] = await settlesTo(user, [answer]);
    expect(await telegramCalls("sendMessage", user)).toHaveLength(1); // the preview
    expect(reply!.edits).toBeGreaterThanOrEqual(1); // edited into the answer
    expect((await telegramCalls("sendMessage", user))[0]!.token).toBe("…oken"); // the partial account's own bot
  });

  it("gives a stranger one pairing code and never reaches the model", async () => {
    const stranger = uniqueUserId();
    forgetPairingWhenDone(stranger);
    const scenario = newScenario("tg-stranger");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    await postUpdate(
      messageUpdate({
        from: { id: stranger },
        chat: privateChat(stranger),
        text: `hello [scenario:${scenario}]`,
      }),
    );
    const messages = await waitFor(async () => {
      const visible = await visibleMessages(stranger);
      return visible.length ? visible : undefined;
    });
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toMatch(/\b[A-HJ-NP-Z2-9]{8}\b/);
    expect(messages[0]!.text).toContain("telegram");
    await postUpdate(
      messageUpdate({
        from: { id: stranger },
        chat: privateChat(stranger),
        text: `again [scenario:${scenario}]`,
      }),
    );
    await settle(2000);
    expect(await visibleMessages(stranger)).toHaveLength(1); // no second code while one is pending
    expect(await recorded(scenario)).toHaveLength(0);
  });
});

describe("Telegram sends whose answer was lost", { timeout: 60_000 }, () => {
  it("never repeats a sendMessage that may have landed: the answer stays single and the user is told once", async () => {
    const scenario = newScenario("tg-lost");
    await scriptModel(scenario, [{ type: "text", text: "Only once." }]);
    const user = TEST_TELEGRAM.allowed[5]!;
    // Telegram takes the message, the connection drops before the answer: the outcome is unknown.
    await scriptTelegram({ method: "sendMessage", chatId: user, dropConnection: true });
    await postUpdate(
      messageUpdate({
        from: { id: user },
        chat: privateChat(user),
        text: `hi [scenario:${scenario}]`,
      }),
    );
    const messages = await settlesTo(user, ["Only once.", UNDELIVERED_NOTICE]);
    expect(messages.filter((m) => m.text === "Only once.")).toHaveLength(1);
  });

  it("repeats a lost edit of the preview into the answer (harmless: Telegram says 'not modified')", async () => {
    const scenario = newScenario("tg-lost-edit");
    const answer = "Edited exactly once, even so.";
    await scriptModel(scenario, [{ type: "text", text: answer }]);
    const user = TEST_TELEGRAM.allowed[6]!;
    await scriptTelegram({
      method: "editMessageText",
      chatId: user,
      dropConnection: true,
      times: 5,
    });
    await postUpdate(
      messageUpdate({
        from: { id: user },
        chat: privateChat(user),
        text: `hi [scenario:${scenario}]`,
      }),
      {
        path: "/telegram-webhook/partial",
        secret: TEST_TELEGRAM.partialWebhookSecret,
      },
    );
    await settlesTo(user, [answer]);
    expect(await telegramCalls("sendMessage", user)).toHaveLength(1); // the preview only; no notice, no second answer
  });
});

describe("Telegram files", { timeout: 60_000 }, () => {
  it("downloads a text document through getFile for the model, and only describes one over the 20 MB getFile limit", async () => {
    const scenario = newScenario("tg-file");
    await scriptModel(scenario, [{ type: "text", text: "Read it." }]);
    const user = TEST_TELEGRAM.allowed[4]!;
    const fileId = `doc-${uniqueUserId()}`;
    await serveTelegramFile({ fileId, content: "line one: saffron\nline two" });
    const res = await postUpdate(
      messageUpdate({
        from: { id: user },
        chat: privateChat(user),
        extra: {
          caption: `what does it say? [scenario:${scenario}]`,
          document: {
            file_id: fileId,
            file_unique_id: "u1",
            file_name: "notes.txt",
            mime_type: "text/plain",
            file_size: 26,
          },
          photo: [
            {
              file_id: "huge-photo",
              file_unique_id: "u2",
              width: 1,
              height: 1,
              file_size: 30 * 1024 * 1024,
            },
          ],
        },
      }),
    );
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    await settlesTo(user, ["Read it."]);
    const body = JSON.stringify((await recorded(scenario))[0]!.body);
    expect(body).toContain("saffron");
    expect(body).toContain("notes.txt");
    const fetched = await telegramCalls("getFile");
    expect(fetched.some((c) => c.args.file_id === fileId)).toBe(true);
    expect(fetched.some((c) => c.args.file_id === "huge-photo")).toBe(false);
  });
});

describe("Telegram groups and forum topics", { timeout: 60_000 }, () => {
  const forum = groupChat(TEST_TELEGRAM.forumGroup, true);
  const inTopic = (thread: number) => (m: { message_thread_id?: number }) =>
    m.message_thread_id === thread;

  it("ignores an unmentioned message in a mention-gated topic, answers a mention in that topic", async () => {
    const quiet = newScenario("tg-quiet");
    await scriptModel(quiet, [{ type: "text", text: "must not be said" }]);
    const member = uniqueUserId();
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        threadId: 3,
        text: `just chatting [scenario:${quiet}]`,
      }),
    );
    const asked = newScenario("tg-asked");
    await scriptModel(asked, [{ type: "text", text: "You called?" }]);
    const text = `${MENTION} help [scenario:${asked}]`;
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        threadId: 3,
        text,
        entities: [mentionEntity(TEST_TELEGRAM.botUsername)],
      }),
    );
    const [reply] = await settlesTo(TEST_TELEGRAM.forumGroup, ["You called?"], inTopic(3));
    expect(reply!.message_thread_id).toBe(3);
    expect(await recorded(quiet)).toHaveLength(0);
    // The unmentioned message reached the next run only as group history.
    const [request] = await recorded(asked);
    expect(JSON.stringify(request!.body)).toContain("just chatting");
  });

  it("keeps topics apart: one topic's conversation never shows in another's session", async () => {
    const first = newScenario("tg-topic-a");
    await scriptModel(first, [{ type: "text", text: "Noted for topic four." }]);
    const member = uniqueUserId();
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        threadId: 4,
        text: `${MENTION} the code word is heliotrope [scenario:${first}]`,
        entities: [mentionEntity(TEST_TELEGRAM.botUsername)],
      }),
    );
    await settlesTo(TEST_TELEGRAM.forumGroup, ["Noted for topic four."], inTopic(4));
    const second = newScenario("tg-topic-b");
    await scriptModel(second, [{ type: "text", text: "Topic five here." }]);
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        threadId: 5,
        text: `${MENTION} what is the code word? [scenario:${second}]`,
        entities: [mentionEntity(TEST_TELEGRAM.botUsername)],
      }),
    );
    await settlesTo(TEST_TELEGRAM.forumGroup, ["Topic five here."], inTopic(5));
    const [request] = await recorded(second);
    expect(JSON.stringify(request!.body)).not.toContain("heliotrope");
  });

  it("answers without a mention in a topic whose entry says so, and in the General topic without a thread id", async () => {
    const open = newScenario("tg-topic-open");
    await scriptModel(open, [{ type: "text", text: "Topic seven answers all." }]);
    const member = uniqueUserId();
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        threadId: 7,
        text: `anyone? [scenario:${open}]`,
      }),
    );
    await settlesTo(TEST_TELEGRAM.forumGroup, ["Topic seven answers all."], inTopic(7));

    const general = newScenario("tg-general");
    await scriptModel(general, [{ type: "text", text: "Hello from General." }]);
    // General-topic messages carry no message_thread_id; a reply with message_thread_id 1 would be refused.
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        text: `${MENTION} hi [scenario:${general}]`,
        entities: [mentionEntity(TEST_TELEGRAM.botUsername)],
      }),
    );
    const [reply] = await settlesTo(
      TEST_TELEGRAM.forumGroup,
      ["Hello from General."],
      (m) => m.message_thread_id === undefined,
    );
    expect(reply!.message_thread_id).toBeUndefined();
    const typing = (await telegramCalls("sendChatAction", TEST_TELEGRAM.forumGroup)).filter(
      (c) => c.args.message_thread_id === 1,
    );
    expect(typing.length).toBeGreaterThan(0); // typing in General keeps the id
  });

  it("treats a reply to the bot's message as a mention", async () => {
    const scenario = newScenario("tg-reply-to-bot");
    await scriptModel(scenario, [{ type: "text", text: "Replying to your reply." }]);
    const member = uniqueUserId();
    await postUpdate(
      messageUpdate({
        from: { id: member },
        chat: forum,
        threadId: 8,
        text: `and another thing [scenario:${scenario}]`,
        replyTo: {
          message_id: 1,
          from: { id: TEST_TELEGRAM.botId, is_bot: true, first_name: "bot" },
        },
      }),
    );
    await settlesTo(TEST_TELEGRAM.forumGroup, ["Replying to your reply."], inTopic(8));
  });
});
