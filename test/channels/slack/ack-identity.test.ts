import { describe, expect, it } from "vitest";
import { TEST_SLACK } from "../../../functions/channels/slack/test-fixtures.ts";
import { slackBotIdentityFromCallback } from "../../../functions/channels/slack/identity.ts";
import { slackEventCallbackSchema } from "../../../functions/channels/slack/payloads.ts";
import {
  APP_ID,
  BOT_USER,
  messageEvent,
  newScenario,
  postSigned,
  scriptModel,
  scriptSlack,
  slackCalls,
  slackMessages,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * The ack never waits on Slack: the bot's ids come from the event's envelope (`authorizations`,
 * `api_app_id`), and when they are missing the `app_mention`/`message` twins of one post still land
 * in one session and collapse there. The "probe" account has a token of its own, so its auth.test
 * can be made to hang or fail without touching other tests.
 */

const PROBE_PATH = "/slack/probe/events";
const PROBE_TOKEN_TAIL = `…${TEST_SLACK.probeBotToken.slice(-4)}`;
const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls on the probe account about this conversation, plus any auth.test (other DMs' runs may be streaming meanwhile). */
async function probeCalls(channel: string): Promise<number> {
  const calls = await slackCalls();
  return calls.filter(
    (call) =>
      call.token === PROBE_TOKEN_TAIL &&
      (call.method === "auth.test" || call.args.channel === channel),
  ).length;
}

/** Thread replies once the last one reads `finalText` (streaming is on: a preview turns into the answer). */
async function repliesInThread(channel: string, ts: string, finalText: string) {
  return waitFor(async () => {
    const replies = (await slackMessages(channel)).filter((m) => !m.deleted && m.thread_ts === ts);
    return replies.at(-1)?.text === finalText ? replies : undefined;
  }, 20_000);
}

describe("Slack ack and the bot's identity", () => {
  for (const failure of ["fails", "hangs"] as const) {
    it(`acks a DM without calling Slack while auth.test ${failure}`, async () => {
      await scriptSlack(
        failure === "fails"
          ? {
              method: "auth.test",
              token: TEST_SLACK.probeBotToken,
              error: "invalid_auth",
              times: 2,
            }
          : { method: "auth.test", token: TEST_SLACK.probeBotToken, delayMs: 20_000, times: 2 },
      );
      for (const authorizations of [undefined, false] as const) {
        const dm = uniqueId("D");
        // The run that follows the ack streams a preview (the default): keep it slow, so any call
        // counted below can only come from the ack path.
        const scenario = newScenario("slack-ack-probe");
        await scriptModel(scenario, [{ type: "text", text: "hi", delayMs: 3_000 }]);
        const before = await probeCalls(dm);
        const startedAt = Date.now();
        const res = await postSigned(
          messageEvent({
            eventId: uniqueId("Ev"),
            channel: dm,
            channelType: "im",
            text: `hello [scenario:${scenario}]`,
            ts: nowTs(),
            authorizations,
          }),
          {
            path: PROBE_PATH,
          },
        );
        const took = Date.now() - startedAt;
        expect(res.status).toBe(200);
        expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
        // Nothing reached the fake Slack on this account while the request was being answered.
        expect(await probeCalls(dm)).toBe(before);
        // Far under the 20 s a hanging auth.test would have cost.
        expect(took).toBeLessThan(5_000);
      }
    });
  }

  // C0OPEN answers without a mention, C0THREADS only with one; both thread replies (replyToMode all).
  for (const channel of ["C0OPEN", "C0THREADS"]) {
    for (const order of ["message first", "app_mention first"] as const) {
      for (const known of [true, false]) {
        it(`answers a mention in ${channel} exactly once (${order}, bot ids ${known ? "in the payload" : "unknown and auth.test failing"})`, async () => {
          await scriptSlack({
            method: "auth.test",
            token: TEST_SLACK.probeBotToken,
            error: "invalid_auth",
            times: 4,
          });
          const scenario = newScenario("slack-twins");
          await scriptModel(scenario, [{ type: "text", text: "Here is one answer." }]);
          const ts = nowTs();
          const text = `<@${BOT_USER}> what is up [scenario:${scenario}]`;
          const copy = (type: "message" | "app_mention") =>
            messageEvent({
              eventId: uniqueId("Ev"),
              channel,
              channelType: "channel",
              type,
              text,
              ts,
              authorizations: known ? undefined : false,
            });
          const [first, second] =
            order === "message first"
              ? [copy("message"), copy("app_mention")]
              : [copy("app_mention"), copy("message")];
          expect((await postSigned(first, { path: PROBE_PATH })).status).toBe(200);
          expect((await postSigned(second, { path: PROBE_PATH })).status).toBe(200);

          const [reply] = await repliesInThread(channel, ts, "Here is one answer.");
          expect(reply!.text).toBe("Here is one answer.");
          await settle(1500);
          expect(await repliesInThread(channel, ts, "Here is one answer.")).toHaveLength(1);
        });
      }
    }
  }

  it("still keeps an unmentioned post in a mention-gated channel silent", async () => {
    const scenario = newScenario("slack-unmentioned");
    await scriptModel(scenario, [{ type: "text", text: "should not be said" }]);
    const ts = nowTs();
    const res = await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: "C0THREADS",
        channelType: "channel",
        text: `<@UOTHER1> lunch? [scenario:${scenario}]`,
        ts,
      }),
      { path: PROBE_PATH },
    );
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    await settle(2000);
    expect(
      (await slackMessages("C0THREADS")).filter((m) => m.thread_ts === ts || m.ts === ts),
    ).toHaveLength(0);
  });

  it("trusts an authorizations entry only for the event's own workspace (or its org-wide install)", () => {
    const callback = (authorization: Record<string, unknown>, enterprise?: string) =>
      slackEventCallbackSchema.parse({
        type: "event_callback",
        team_id: "T1",
        enterprise_id: enterprise,
        api_app_id: "A1",
        event_id: "Ev1",
        event: { type: "message" },
        authorizations: [{ is_bot: true, user_id: "UBOT", ...authorization }],
      });
    expect(slackBotIdentityFromCallback(callback({ team_id: "T1" }))).toEqual({
      userId: "UBOT",
      appId: "A1",
    });
    // Slack Connect: another workspace's installation names a different bot user.
    expect(slackBotIdentityFromCallback(callback({ team_id: "T2" }))).toEqual({
      userId: undefined,
      appId: "A1",
    });
    expect(slackBotIdentityFromCallback(callback({ team_id: "T1", is_bot: false }))).toEqual({
      userId: undefined,
      appId: "A1",
    });
    expect(
      slackBotIdentityFromCallback(
        callback({ team_id: null, enterprise_id: "E1", is_enterprise_install: true }, "E1"),
      ),
    ).toEqual({ userId: "UBOT", appId: "A1" });
  });

  it("drops the bot's own posts whether its ids come from authorizations or only from the app id", async () => {
    await scriptSlack({
      method: "auth.test",
      token: TEST_SLACK.probeBotToken,
      error: "invalid_auth",
      times: 4,
    });
    const own = [
      // Known bot user (authorizations), posted as that user.
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: uniqueId("D"),
        channelType: "im",
        user: BOT_USER,
        text: "my reply",
        ts: nowTs(),
      }),
      // No authorizations: a bot post carrying our app id.
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: uniqueId("D"),
        channelType: "im",
        user: BOT_USER,
        text: "my reply",
        ts: nowTs(),
        authorizations: false,
        extra: {
          bot_id: "BBOTTEST",
          app_id: APP_ID,
          bot_profile: { id: "BBOTTEST", app_id: APP_ID, name: "edgeclaw" },
        },
      }),
      // Edit of our own post, with only the app id to go on.
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: uniqueId("D"),
        channelType: "im",
        text: "",
        ts: nowTs(),
        authorizations: false,
        extra: {
          subtype: "message_changed",
          message: {
            user: BOT_USER,
            bot_id: "BBOTTEST",
            app_id: APP_ID,
            text: "edited",
            ts: "1.0",
          },
        },
      }),
    ];
    for (const body of own) {
      const res = await postSigned(body, { path: PROBE_PATH });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-edgeclaw-dropped") ?? "").toMatch(/own message/);
    }
    // A different app's bot post is not ours (and, with allowBots off, dropped for that reason).
    const other = await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: uniqueId("D"),
        channelType: "im",
        user: "UOTHERBOT",
        text: "hi",
        ts: nowTs(),
        extra: {
          bot_id: "BOTHER",
          app_id: "AOTHER",
          bot_profile: { id: "BOTHER", app_id: "AOTHER" },
        },
      }),
      { path: PROBE_PATH },
    );
    expect(other.headers.get("x-edgeclaw-dropped") ?? "").toMatch(/allowBots/);
  });
});
