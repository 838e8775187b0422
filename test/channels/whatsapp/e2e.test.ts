import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import { TEST_WHATSAPP } from "../../../functions/channels/whatsapp/test-fixtures.ts";
import {
  commandsFor,
  companionOffline,
  deliver,
  forgetPairingWhenDone,
  groupJid,
  messagePayload,
  newScenario,
  person,
  recorded,
  SELF_JID,
  scriptModel,
  sendsTo,
  sentSettled,
  settle,
  waitFor,
  waMessage,
} from "./helpers.ts";

/**
 * A WhatsApp event, as the companion's Baileys connector forwards it → Worker parse → durable
 * accept → agent run against the fake model → reply as a signed /v1/outbound command to the fake
 * companion (the real HTTP surface with a recording sender; test-kit.ts). Accounts: TEST_WHATSAPP.
 */

const answer = (text: string) => [{ type: "text", text }];

describe("WhatsApp end to end", () => {
  it("tells the companion to run every enabled account, with no secret to read", async () => {
    const path = "/internal/companion/accounts";
    const headers = await signRequest(TEST_WHATSAPP.companionKey, {
      method: "GET",
      path,
      body: new Uint8Array(),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const res = await SELF.fetch(`https://edgeclaw.test${path}`, { headers });
    const accounts = (
      (await res.json()) as {
        accounts: Array<{ channel: string; accountId: string; secretEnv: Record<string, string> }>;
      }
    ).accounts.filter((a) => a.channel === "whatsapp");
    expect(accounts.map((a) => a.accountId).sort()).toEqual(["default", "quote", "team"]);
    expect(accounts.every((a) => Object.keys(a.secretEnv).length === 0)).toBe(true);
  });

  it("answers a DM once, even when Baileys delivers the same message three times; marks it read and types while working", async () => {
    const scenario = newScenario("wa-dm");
    await scriptModel(scenario, answer("Hello from **edgeclaw**."));
    const user = person();
    const message = waMessage({ chat: user.jid, text: `hi [scenario:${scenario}]` });
    const deliveries = await Promise.all(
      [1, 2, 3].map(() => deliver("team", messagePayload(message))),
    );
    expect(deliveries.flatMap((d) => d.outcomes).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);
    const [reply] = await sentSettled(user.jid, 1);
    expect(reply!.payload.text).toBe("Hello from *edgeclaw*.");
    expect(reply!.target.replyToId).toBeUndefined(); // replyToMode off: not quoted
    expect(reply!.commandId).toMatch(/^wa-[0-9a-f]{64}$/);
    expect((await recorded(scenario)).length).toBe(1);
    const ops = (await commandsFor(user.jid)).map((c) => c.op);
    expect(ops).toContain("markRead");
    expect(ops).toContain("typing");
    const read = (await commandsFor(user.jid)).find((c) => c.op === "markRead")!;
    expect(read.target.messageId).toBe(message.key.id);
  });

  it("in a group: unmentioned chatter stays history, a mention (or a reply to the bot) gets one answer", async () => {
    const quiet = newScenario("wa-quiet");
    await scriptModel(quiet, answer("Must not be said."));
    const group = groupJid();
    const member = person();
    const chatter = waMessage({
      chat: group,
      from: member.jid,
      text: `chatting [scenario:${quiet}]`,
    });
    expect((await deliver("team", messagePayload(chatter))).outcomes).toEqual(["accepted"]);

    const scenario = newScenario("wa-mention");
    await scriptModel(scenario, answer("Group answer."));
    const mention = waMessage({
      chat: group,
      from: member.jid,
      text: `@15550001111 what now? [scenario:${scenario}]`,
      mentions: [SELF_JID.id.replace(":7", "")],
    });
    await deliver("team", messagePayload(mention));
    const sent = await sentSettled(group, 1);
    expect(sent.map((c) => c.payload.text)).toEqual(["Group answer."]);
    expect(await recorded(quiet)).toEqual([]);
    expect(JSON.stringify((await recorded(scenario))[0])).not.toContain("@15550001111");

    const replied = newScenario("wa-reply");
    await scriptModel(replied, answer("Answer to a reply."));
    await deliver(
      "team",
      messagePayload(
        waMessage({
          chat: group,
          from: member.jid,
          text: `and this? [scenario:${replied}]`,
          quotedParticipant: SELF_JID.lid,
        }),
      ),
    );
    await waitFor(async () => ((await sendsTo(group)).length >= 2 ? true : undefined));
    expect((await sendsTo(group)).map((c) => c.payload.text)).toEqual([
      "Group answer.",
      "Answer to a reply.",
    ]);
  });

  it("a group listed with requireMention false answers without a mention; replyToMode first quotes the trigger with its author", async () => {
    const scenario = newScenario("wa-quiet-group");
    await scriptModel(scenario, answer("No mention needed."));
    const member = person();
    const message = waMessage({
      chat: TEST_WHATSAPP.quietGroup,
      from: member.jid,
      text: `status? [scenario:${scenario}]`,
    });
    await deliver("quote", messagePayload(message));
    await waitFor(async () =>
      (await sendsTo(TEST_WHATSAPP.quietGroup)).some((c) => c.payload.text === "No mention needed.")
        ? true
        : undefined,
    );
    const reply = (await sendsTo(TEST_WHATSAPP.quietGroup)).find(
      (c) => c.payload.text === "No mention needed.",
    )!;
    expect(reply.target.replyToId).toBe(message.key.id);
    expect(reply.payload.quotedParticipant).toBe(member.jid);
    // sendReadReceipts false on this account: no read receipt for the message.
    expect(
      (await commandsFor(TEST_WHATSAPP.quietGroup)).some(
        (c) => c.op === "markRead" && c.target.messageId === message.key.id,
      ),
    ).toBe(false);
  });

  it("a stranger's DM under the defaults earns one pairing code and no model call; a second DM stays silent; groups stay closed", async () => {
    const scenario = newScenario("wa-stranger");
    await scriptModel(scenario, answer("Must not be said."));
    const stranger = person();
    forgetPairingWhenDone(stranger.phone);
    await deliver(
      "default",
      messagePayload(waMessage({ chat: stranger.jid, text: `let me in [scenario:${scenario}]` })),
    );
    const [code] = await waitFor(async () => {
      const sent = await sendsTo(stranger.jid);
      return sent.length ? sent : undefined;
    });
    expect(String(code!.payload.text)).toMatch(/pairing/i);
    await deliver(
      "default",
      messagePayload(waMessage({ chat: stranger.jid, text: `hello? [scenario:${scenario}]` })),
    );
    const group = groupJid();
    await deliver(
      "default",
      messagePayload(
        waMessage({
          chat: group,
          from: stranger.jid,
          text: `@15550001111 hi [scenario:${scenario}]`,
          mentions: ["15550001111@s.whatsapp.net"],
        }),
      ),
    );
    await settle(1500);
    expect((await sendsTo(stranger.jid)).length).toBe(1);
    expect(await sendsTo(group)).toEqual([]);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("while the account is not linked (companion answers not_connected) the reply waits and is sent once it is back", async () => {
    const scenario = newScenario("wa-offline");
    await scriptModel(scenario, answer("Sent after the relink."));
    const user = person();
    await companionOffline(true);
    try {
      await deliver(
        "team",
        messagePayload(waMessage({ chat: user.jid, text: `hi [scenario:${scenario}]` })),
      );
      await waitFor(async () => ((await recorded(scenario)).length ? true : undefined));
      await settle(1000);
      expect(await sendsTo(user.jid)).toEqual([]);
    } finally {
      await companionOffline(false);
    }
    const sent = await sentSettled(user.jid, 1);
    expect(sent.map((c) => c.payload.text)).toEqual(["Sent after the relink."]);
  }, 60_000);

  it("drops the device's own messages, status broadcasts and malformed payloads without storing anything", async () => {
    const own = waMessage({ chat: person().jid, text: "sent from the phone" });
    own.key.fromMe = true;
    expect((await deliver("team", messagePayload(own))).dropped).toEqual([
      "the linked device's own message",
    ]);
    const status = waMessage({ chat: "status@broadcast", from: person().jid, text: "story" });
    expect((await deliver("team", messagePayload(status))).outcomes).toEqual([]);
    const malformed = await deliver("team", { type: "message", self: SELF_JID }, "bad:1");
    expect(malformed.status).toBe("failed");
  });
});
