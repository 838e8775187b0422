import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TEST_SIGNAL } from "../../../functions/channels/signal/test-fixtures.ts";
import { signCompanion } from "./sign.ts";
import {
  BOT,
  COMPANION_KEY,
  deliver,
  envelope,
  forgetPairingWhenDone,
  newScenario,
  number,
  payloadOf,
  recorded,
  scriptModel,
  sentSettled,
  sentTo,
  settle,
  waitFor,
  workerEnv,
} from "./helpers.ts";

/**
 * A Signal envelope, as the companion's connector forwards it from signal-cli's receive → Worker
 * parse → durable accept → agent run against the fake model → reply as a signed companion command
 * (`POST /v1/outbound`) → the companion's Signal sender → the fake signal-cli daemon's JSON-RPC
 * `send`. Accounts: TEST_SIGNAL in test-fixtures.ts.
 */

const answer = (text: string) => [{ type: "text", text }];
const control = (path: string, body: unknown) =>
  fetch(`${String(workerEnv.FAKE_SIGNAL_URL)}/_control/${path}`, {
    method: "POST",
    body: JSON.stringify(body),
  });

describe("Signal end to end", () => {
  it("tells the companion each account's number and daemon URL — and no secret", async () => {
    const path = "/internal/companion/accounts";
    const headers = await signCompanion(COMPANION_KEY, "GET", path, "");
    const res = await SELF.fetch(`https://edgeclaw.test${path}`, { headers });
    const accounts = (
      (await res.json()) as {
        accounts: Array<{
          channel: string;
          accountId: string;
          settings: Record<string, unknown>;
          secretEnv: object;
        }>;
      }
    ).accounts.filter((a) => a.channel === "signal");
    expect(accounts.map((a) => a.accountId).sort()).toEqual(["default", "team"]);
    const team = accounts.find((a) => a.accountId === "team")!;
    expect(team.settings).toMatchObject({
      number: TEST_SIGNAL.team,
      url: String(workerEnv.FAKE_SIGNAL_URL),
      managed: null,
      ignoreAttachments: false,
      mediaMaxBytes: 8 * 1024 * 1024,
    });
    expect(team.secretEnv).toEqual({});
  });

  it("answers a DM once, quoting it, though the same envelope is delivered three times; typing and a read receipt go out", async () => {
    const scenario = newScenario("sg-dm");
    await scriptModel(scenario, answer("Hello from **edgeclaw**."));
    const alice = number();
    const payload = payloadOf(envelope(alice, { message: `hi [scenario:${scenario}]` }), "team");
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
    const sent = await sentSettled(alice, 1);
    // The Markdown as Signal's own styles: plain text and a BOLD range over "edgeclaw".
    expect(sent.map((call) => call.params.message)).toEqual(["Hello from edgeclaw."]);
    expect(sent[0]).toMatchObject({
      account: TEST_SIGNAL.team,
      params: {
        recipient: [alice],
        quoteTimestamp: payload.envelope.timestamp,
        quoteAuthor: alice,
        textStyle: ["11:8:BOLD"],
      },
    });
    expect((await recorded(scenario)).length).toBe(1);
    const typing = await sentTo(alice, "sendTyping");
    expect(typing.map((call) => call.params.stop)).toContain(false);
    const receipts = await sentTo(alice, "sendReceipt");
    expect(receipts.map((call) => call.params)).toEqual([
      { recipient: alice, targetTimestamp: [payload.envelope.timestamp], type: "read" },
    ]);
  });

  it("a group under mention gating: chatter stays quiet, a native @mention of the bot is answered in the group, an open group answers without one", async () => {
    const group = `group:${TEST_SIGNAL.mentionGroup}`;
    const quiet = newScenario("sg-quiet");
    await scriptModel(quiet, answer("Must not be said."));
    const bob = number();
    const groupInfo = { groupId: TEST_SIGNAL.mentionGroup, type: "DELIVER" };
    const chatter = payloadOf(
      envelope(bob, { message: `chatting [scenario:${quiet}]`, groupInfo }),
      "team",
    );
    expect((await deliver("team", chatter)).outcomes).toEqual(["accepted"]);

    const scenario = newScenario("sg-mention");
    await scriptModel(scenario, answer("Group answer."));
    const mention = payloadOf(
      envelope(bob, {
        message: `\uFFFC what now? [scenario:${scenario}]`,
        mentions: [
          { name: TEST_SIGNAL.team, number: TEST_SIGNAL.team, uuid: null, start: 0, length: 1 },
        ],
        groupInfo,
      }),
      "team",
    );
    await deliver("team", mention);
    const sent = await sentSettled(group, 1);
    expect(sent.map((call) => call.params.message)).toEqual(["Group answer."]);
    expect(sent[0]!.params).toMatchObject({ groupId: TEST_SIGNAL.mentionGroup, quoteAuthor: bob });
    expect(await recorded(quiet)).toEqual([]);
    expect(JSON.stringify((await recorded(scenario))[0])).not.toContain("\uFFFC");
    expect(await sentTo(group, "sendReceipt")).toEqual([]); // signal-cli has none for groups

    const open = newScenario("sg-open");
    await scriptModel(open, answer("Open group answer."));
    await deliver(
      "team",
      payloadOf(
        envelope(bob, {
          message: `no mention [scenario:${open}]`,
          groupInfo: { groupId: TEST_SIGNAL.openGroup, type: "DELIVER" },
        }),
        "team",
      ),
    );
    const openSent = await sentSettled(`group:${TEST_SIGNAL.openGroup}`, 1);
    expect(openSent.map((call) => call.params.message)).toEqual(["Open group answer."]);
  });

  it("a stranger's DM under the defaults earns one pairing code and no model call; a second DM stays silent; an unlisted group is ignored", async () => {
    const scenario = newScenario("sg-stranger");
    await scriptModel(scenario, answer("Must not be said."));
    const stranger = number();
    forgetPairingWhenDone(stranger);
    const dm = (text: string) =>
      deliver("default", payloadOf(envelope(stranger, { message: text })));
    await dm(`let me in [scenario:${scenario}]`);
    const [code] = await waitFor(async () => {
      const sent = await sentTo(stranger);
      return sent.length ? sent : undefined;
    });
    expect(String(code!.params.message)).toMatch(/pairing/i);
    expect(code!.account).toBe(BOT.number);
    await dm(`hello? [scenario:${scenario}]`);
    await deliver(
      "default",
      payloadOf(
        envelope(stranger, {
          message: `\uFFFC group [scenario:${scenario}]`,
          mentions: [{ number: BOT.number, uuid: BOT.uuid, start: 0, length: 1 }],
          groupInfo: { groupId: TEST_SIGNAL.openGroup, type: "DELIVER" },
        }),
      ),
    );
    await settle(1500);
    expect((await sentTo(stranger)).length).toBe(1);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("a send whose answer from signal-cli was lost is not sent again: one message, and nothing repeated later", async () => {
    const scenario = newScenario("sg-lost");
    await scriptModel(scenario, answer("At most once."));
    const carol = number();
    await control("script", { method: "send", action: "dropAfter" });
    await deliver(
      "team",
      payloadOf(envelope(carol, { message: `once [scenario:${scenario}]` }), "team"),
    );
    await waitFor(async () => ((await sentTo(carol)).length >= 1 ? true : undefined));
    await settle(3000);
    const sent = await sentTo(carol);
    expect(sent.map((call) => call.params.message)).toEqual(["At most once."]);
  });
});
