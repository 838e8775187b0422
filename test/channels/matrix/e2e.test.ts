import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import { TEST_MATRIX } from "../../../functions/channels/matrix/test-fixtures.ts";
import {
  BOT,
  COMPANION_KEY,
  control,
  deliver,
  forgetPairingWhenDone,
  homeserverCalls,
  joinedRoom,
  mxId,
  newScenario,
  payloadOf,
  recorded,
  roomEvent,
  scriptModel,
  sentIn,
  sentSettled,
  settle,
  waitFor,
} from "./helpers.ts";

/**
 * A Matrix room event, as the companion's /sync connector forwards it → Worker parse → durable
 * accept → agent run against the fake model → reply through the fake homeserver's
 * `PUT /rooms/{roomId}/send/m.room.message/{txnId}`. Accounts: TEST_MATRIX in test-fixtures.ts.
 */

const answer = (text: string) => [{ type: "text", text }];

describe("Matrix end to end", () => {
  it("tells the companion to run every enabled account with the homeserver, the invite policy and the token's env name — never the token", async () => {
    const path = "/internal/companion/accounts";
    const headers = await signRequest(COMPANION_KEY, {
      method: "GET",
      path,
      body: new Uint8Array(),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const res = await SELF.fetch(`https://edgeclaw.test${path}`, { headers });
    const text = await res.text();
    expect(text).not.toContain(TEST_MATRIX.accessToken);
    const accounts = (
      JSON.parse(text) as {
        accounts: Array<{
          channel: string;
          accountId: string;
          settings: Record<string, unknown>;
          secretEnv: Record<string, string>;
        }>;
      }
    ).accounts.filter((a) => a.channel === "matrix");
    expect(accounts.map((a) => a.accountId).sort()).toEqual(["default", "team", "threads"]);
    expect(accounts[0]!.settings).toMatchObject({
      homeserver: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      dangerouslyAllowPrivateNetwork: true,
      autoJoin: "off",
      autoJoinAllowlist: [],
    });
    expect(accounts[0]!.secretEnv).toEqual({ accessToken: "TEST_MATRIX_ACCESS_TOKEN" });
  });

  it("answers a DM once, even when the same event is delivered three times", async () => {
    const scenario = newScenario("mx-dm");
    await scriptModel(scenario, answer("Hello from **edgeclaw**."));
    const roomId = await joinedRoom("dm");
    const event = roomEvent({ sender: mxId("@", "u"), body: `hi [scenario:${scenario}]` });
    const payload = payloadOf(roomId, event, { direct: true });
    const deliveries = await Promise.all([
      deliver("team", payload),
      deliver("team", payload),
      deliver("team", payload),
    ]);
    expect(deliveries.flatMap((d) => d.outcomes).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);
    const sent = await sentSettled(roomId, 1);
    expect(sent.map((e) => e.content.body)).toEqual(["Hello from **edgeclaw**."]);
    expect(sent[0]!.content["m.relates_to"]).toBeUndefined(); // replyToMode off: not quoted
    expect((await recorded(scenario)).length).toBe(1);
    const typing = await homeserverCalls(
      `/rooms/${encodeURIComponent(roomId)}/typing/${encodeURIComponent(BOT)}`,
    );
    expect(typing.length).toBeGreaterThan(0);
  });

  it("answers a mention in a room inside the thread it came from (threadReplies inbound) and keeps unmentioned chatter as history", async () => {
    const quiet = newScenario("mx-quiet");
    await scriptModel(quiet, answer("Must not be said."));
    const roomId = await joinedRoom("room");
    const chatter = roomEvent({ sender: mxId("@", "u"), body: `chatting [scenario:${quiet}]` });
    expect((await deliver("team", payloadOf(roomId, chatter))).outcomes).toEqual(["accepted"]);

    const scenario = newScenario("mx-mention");
    await scriptModel(scenario, answer("Thread answer."));
    const root = mxId("$", "root");
    const mention = roomEvent({
      sender: mxId("@", "u"),
      content: {
        msgtype: "m.text",
        body: `${BOT}: what now? [scenario:${scenario}]`,
        "m.mentions": { user_ids: [BOT] },
        "m.relates_to": { rel_type: "m.thread", event_id: root },
      },
    });
    await deliver("team", payloadOf(roomId, mention));
    const sent = await sentSettled(roomId, 1);
    expect(sent.map((e) => [e.content.body, e.content["m.relates_to"]?.rel_type])).toEqual([
      ["Thread answer.", "m.thread"],
    ]);
    expect(sent[0]!.content["m.relates_to"]?.event_id).toBe(root);
    expect(sent[0]!.content["m.relates_to"]?.["m.in_reply_to"]?.event_id).toBe(mention.event_id);
    expect(await recorded(quiet)).toEqual([]);
    expect(JSON.stringify((await recorded(scenario))[0])).not.toContain(BOT);
  });

  it("threadReplies always opens a thread rooted at the trigger", async () => {
    const scenario = newScenario("mx-always");
    await scriptModel(scenario, answer("In a new thread."));
    const roomId = await joinedRoom("always");
    const mention = roomEvent({
      sender: mxId("@", "u"),
      content: {
        msgtype: "m.text",
        body: `hey [scenario:${scenario}]`,
        "m.mentions": { user_ids: [BOT] },
      },
    });
    await deliver("threads", payloadOf(roomId, mention));
    const [reply] = await sentSettled(roomId, 1);
    expect(reply!.content["m.relates_to"]).toMatchObject({
      rel_type: "m.thread",
      event_id: mention.event_id,
    });
  });

  it("a room allowlist: an unlisted room is ignored under the defaults, a members-only room answers only its member", async () => {
    const unlisted = newScenario("mx-unlisted");
    await scriptModel(unlisted, answer("Must not be said."));
    const roomId = await joinedRoom("unlisted");
    const { parsed } = await deliver(
      "default",
      payloadOf(
        roomId,
        roomEvent({
          sender: mxId("@", "u"),
          content: {
            msgtype: "m.text",
            body: `${BOT} hello [scenario:${unlisted}]`,
            "m.mentions": { user_ids: [BOT] },
          },
        }),
      ),
    );
    expect(parsed.kind).toBe("envelopes");

    const refused = newScenario("mx-refused");
    await scriptModel(refused, answer("Must not be said either."));
    const members = TEST_MATRIX.membersRoom;
    await control("room", { roomId: members, joined: true });
    await deliver(
      "team",
      payloadOf(
        members,
        roomEvent({ sender: mxId("@", "s"), body: `me too [scenario:${refused}]` }),
      ),
    );
    const allowed = newScenario("mx-member");
    await scriptModel(allowed, answer("Hello member."));
    await deliver(
      "team",
      payloadOf(
        members,
        roomEvent({ sender: TEST_MATRIX.member, body: `hi [scenario:${allowed}]` }),
      ),
    );
    await waitFor(async () =>
      (await sentIn(members)).some((e) => e.content.body === "Hello member.") ? true : undefined,
    );
    await settle(1500);
    expect(await sentIn(roomId)).toEqual([]);
    expect(await recorded(unlisted)).toEqual([]);
    expect(await recorded(refused)).toEqual([]);
  });

  it("a stranger's DM under the defaults earns one pairing code and no model call; a second DM stays silent", async () => {
    const scenario = newScenario("mx-stranger");
    await scriptModel(scenario, answer("Must not be said."));
    const stranger = mxId("@", "s");
    forgetPairingWhenDone(stranger);
    const roomId = await joinedRoom("sdm");
    const dm = (text: string) =>
      deliver(
        "default",
        payloadOf(roomId, roomEvent({ sender: stranger, body: text }), { direct: true }),
      );
    await dm(`let me in [scenario:${scenario}]`);
    const [code] = await waitFor(async () => {
      const sent = await sentIn(roomId);
      return sent.length ? sent : undefined;
    });
    expect(code!.content.body).toMatch(/pairing/i);
    await dm(`hello? [scenario:${scenario}]`);
    await settle(1500);
    expect((await sentIn(roomId)).length).toBe(1);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("a send whose answer was lost is sent again as the same transaction: the homeserver keeps one event", async () => {
    const scenario = newScenario("mx-lost");
    await scriptModel(scenario, answer("Exactly once."));
    const roomId = await joinedRoom("lost");
    const sendPath = `/rooms/${encodeURIComponent(roomId)}/send/`;
    // The first PUT is done by the homeserver, then its connection is cut before the answer.
    await control("script", { method: "PUT", path: sendPath, times: 1, dropAfter: true });
    await deliver(
      "team",
      payloadOf(
        roomId,
        roomEvent({ sender: mxId("@", "u"), body: `once [scenario:${scenario}]` }),
        {
          direct: true,
        },
      ),
    );
    await waitFor(async () => ((await homeserverCalls(sendPath)).length >= 2 ? true : undefined));
    await settle(1500);
    const puts = await homeserverCalls(sendPath);
    expect(new Set(puts.map((call) => call.path)).size).toBe(1); // the same txnId both times
    const sent = await sentIn(roomId);
    expect(sent.map((e) => e.content.body)).toEqual(["Exactly once."]);
    expect(sent[0]!.unsigned?.transaction_id).toMatch(/^ec[0-9a-f]{64}$/);
  });
});
