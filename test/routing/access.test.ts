import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { withDb } from "../../functions/db/client.ts";
import { decideAccess, type AccessDecision } from "../../functions/routing/access.ts";
import { postgresAccessStore } from "../../functions/routing/access-store-postgres.ts";
import { approvePairingCode } from "../../functions/routing/pairing.ts";
import { PAIRING_CODE_ALPHABET } from "../../functions/routing/pairing-code.ts";
import { envelope, uniqueChannel } from "./helpers.ts";
import type { InboundEnvelopeInput } from "../../functions/core/envelope.ts";

const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;

async function decide(
  config: Record<string, unknown>,
  e: Partial<InboundEnvelopeInput>,
  now = T0,
  agentId?: string,
): Promise<AccessDecision> {
  return withDb(env, (db) =>
    decideAccess({
      config: parseConfig(config),
      envelope: envelope(e),
      store: postgresAccessStore(db),
      now,
      agentId,
    }),
  );
}

function codeOf(decision: AccessDecision): string {
  if (decision.kind !== "pairing")
    throw new Error(`expected pairing, got ${JSON.stringify(decision)}`);
  const code = /Pairing code: (\S+)/.exec(decision.replyText)?.[1];
  if (!code) throw new Error("no code in reply");
  return code;
}

describe("dmPolicy", () => {
  it("defaults to pairing: an unknown sender gets one 8-character code from the unambiguous alphabet", async () => {
    const channel = uniqueChannel();
    const decision = await decide({}, { channel, senderId: "U1" });
    const code = codeOf(decision);
    expect(code).toHaveLength(8);
    for (const ch of code) expect(PAIRING_CODE_ALPHABET).toContain(ch);
    expect(code).not.toMatch(/[0O1I]/);
    expect(decision.kind === "pairing" && decision.replyText).toContain(
      `npx edgeclaw pairing approve ${channel} ${code}`,
    );
  });

  it("a repeat message (or duplicate delivery) mints no new code and stays silent", async () => {
    const channel = uniqueChannel();
    const first = await decide({}, { channel, senderId: "U1" });
    expect(first.kind).toBe("pairing");
    const [again, duplicate] = await Promise.all([
      decide({}, { channel, senderId: "U1" }, T0 + 1000),
      decide({}, { channel, senderId: "U1" }, T0 + 1000),
    ]);
    expect(again).toEqual({
      kind: "drop",
      reason: expect.stringMatching(/pending/),
      configKey: `channels.${channel}.allowFrom`,
    });
    expect(duplicate.kind).toBe("drop");
    const pending = await withDb(env, (db) =>
      postgresAccessStore(db).listPairingRequests(channel, undefined, T0 + 1000),
    );
    expect(pending.map((r) => r.code)).toEqual([codeOf(first)]);
  });

  it("a retry of the event that created the request re-derives its code; another event stays silent", async () => {
    const channel = uniqueChannel();
    const asked = envelope({ channel, senderId: "U1" });
    const decideFor = (e: typeof asked, now: number) =>
      withDb(env, (db) =>
        decideAccess({ config: parseConfig({}), envelope: e, store: postgresAccessStore(db), now }),
      );
    const code = codeOf(await decideFor(asked, T0));
    // The SessionDO died before storing the reply; triage of the same event runs again.
    expect(codeOf(await decideFor(asked, T0 + 5000))).toBe(code);
    expect((await decide({}, { channel, senderId: "U1" }, T0 + 6000)).kind).toBe("drop");
    const pending = await withDb(env, (db) =>
      postgresAccessStore(db).listPairingRequests(channel, undefined, T0 + 6000),
    );
    expect(pending.map((r) => r.code)).toEqual([code]);
  });

  it("concurrent first deliveries create exactly one request", async () => {
    const channel = uniqueChannel();
    const results = await Promise.all([1, 2, 3].map(() => decide({}, { channel, senderId: "U7" })));
    expect(results.filter((r) => r.kind === "pairing")).toHaveLength(1);
    const pending = await withDb(env, (db) =>
      postgresAccessStore(db).listPairingRequests(channel, undefined, T0),
    );
    expect(pending).toHaveLength(1);
  });

  it("codes expire after 1 hour; the next message mints a new one", async () => {
    const channel = uniqueChannel();
    const first = codeOf(await decide({}, { channel, senderId: "U1" }));
    expect((await decide({}, { channel, senderId: "U1" }, T0 + HOUR - 1)).kind).toBe("drop");
    const second = codeOf(await decide({}, { channel, senderId: "U1" }, T0 + HOUR));
    expect(second).not.toBe(first);
  });

  it("at most 3 pending requests per channel account; a 4th sender is ignored until a slot frees", async () => {
    const channel = uniqueChannel();
    for (const sender of ["A", "B", "C"])
      expect((await decide({}, { channel, senderId: sender })).kind).toBe("pairing");
    expect(await decide({}, { channel, senderId: "D" })).toMatchObject({
      kind: "drop",
      reason: expect.stringMatching(/cap/),
    });
    // Another account of the same channel has its own cap.
    expect((await decide({}, { channel, accountId: "other", senderId: "D" })).kind).toBe("pairing");
    // After expiry the slot is free again.
    expect((await decide({}, { channel, senderId: "D" }, T0 + HOUR + 1)).kind).toBe("pairing");
  });

  it("an approved sender is allowed, DM only, and the first approval becomes the owner", async () => {
    const channel = uniqueChannel();
    const code = codeOf(await decide({}, { channel, senderId: "U1" }));
    const approved = await withDb(env, (db) =>
      approvePairingCode({
        config: parseConfig({}),
        store: postgresAccessStore(db),
        channel,
        code: code.toLowerCase(),
        actor: "test",
        now: T0 + 5,
      }),
    );
    expect(approved.ok).toBe(true);
    expect(await decide({}, { channel, senderId: "U1" }, T0 + 10)).toMatchObject({
      kind: "allow",
      commandAuthorized: true,
    });
    // Approval does not reach groups.
    const group = {
      channel,
      chatType: "group" as const,
      peerId: "G1",
      senderId: "U1",
      wasMentioned: true,
    };
    expect((await decide({ channels: { [channel]: { groupPolicy: "open" } } }, group)).kind).toBe(
      "allow",
    );
    expect(
      (
        await decide(
          { channels: { [channel]: { groups: { G1: {} }, groupAllowFrom: ["someone-else"] } } },
          group,
        )
      ).kind,
    ).toBe("drop");
  });

  it("allowlist admits only allowFrom (plus approvals) and never sends a code", async () => {
    const channel = uniqueChannel();
    const config = {
      channels: { [channel]: { dmPolicy: "allowlist", allowFrom: ["U1", `${channel}:U2`] } },
    };
    expect((await decide(config, { channel, senderId: "U1" })).kind).toBe("allow");
    expect((await decide(config, { channel, senderId: "u2" })).kind).toBe("allow");
    expect(await decide(config, { channel, senderId: "U3" })).toMatchObject({
      kind: "drop",
      reason: expect.stringMatching(/allowlist/),
      configKey: `channels.${channel}.allowFrom`,
    });
  });

  it('open admits everyone and requires "*" in allowFrom', async () => {
    const channel = uniqueChannel();
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "open", allowFrom: ["*"] } } },
          { channel, senderId: "anyone" },
        )
      ).kind,
    ).toBe("allow");
    expect(() => parseConfig({ channels: { [channel]: { dmPolicy: "open" } } })).not.toThrow(); // channels are validated by decideAccess / config check
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "open", allowFrom: ["U1"] } } },
          { channel, senderId: "U1" },
        )
      ).kind,
    ).toBe("drop");
  });

  it("disabled drops every DM; per-account blocks inherit and override the root", async () => {
    const channel = uniqueChannel();
    const config = {
      channels: {
        [channel]: {
          dmPolicy: "disabled",
          accounts: { work: { dmPolicy: "allowlist", allowFrom: ["U1"] } },
        },
      },
    };
    expect(await decide(config, { channel, senderId: "U1" })).toMatchObject({
      kind: "drop",
      reason: "dmPolicy is disabled",
    });
    expect((await decide(config, { channel, accountId: "work", senderId: "U1" })).kind).toBe(
      "allow",
    );
  });

  it("accessGroup references admit members; an unknown group admits nobody", async () => {
    const channel = uniqueChannel();
    const accessGroups = {
      ops: { type: "message.senders", members: { [channel]: ["U5"], "*": ["GLOBAL"] } },
    };
    const config = {
      accessGroups,
      channels: {
        [channel]: { dmPolicy: "allowlist", allowFrom: ["accessGroup:ops", "accessGroup:ghost"] },
      },
    };
    expect((await decide(config, { channel, senderId: "U5" })).kind).toBe("allow");
    expect((await decide(config, { channel, senderId: "GLOBAL" })).kind).toBe("allow");
    expect((await decide(config, { channel, senderId: "U6" })).kind).toBe("drop");
  });

  it("bots are dropped unless allowBots is on (channel, account, or the group's entry)", async () => {
    expect((await decide({}, { channel: uniqueChannel(), senderIsBot: true })).kind).toBe("drop");
    const channel = uniqueChannel();
    const open = { dmPolicy: "open", allowFrom: ["*"] };
    expect(
      (
        await decide(
          { channels: { [channel]: { ...open, allowBots: true } } },
          { channel, senderIsBot: true },
        )
      ).kind,
    ).toBe("allow");
    const perAccount = {
      channels: { [channel]: { ...open, accounts: { ops: { allowBots: true } } } },
    };
    expect((await decide(perAccount, { channel, accountId: "ops", senderIsBot: true })).kind).toBe(
      "allow",
    );
    expect((await decide(perAccount, { channel, senderIsBot: true })).kind).toBe("drop");
    const perGroup = {
      channels: {
        [channel]: {
          groupPolicy: "allowlist",
          groups: { G1: { requireMention: false, allowBots: true }, G2: { requireMention: false } },
        },
      },
    };
    const inGroup = (peerId: string) => ({
      channel,
      chatType: "group" as const,
      peerId,
      senderIsBot: true,
      route: { channel, to: peerId },
    });
    expect((await decide(perGroup, inGroup("G1"))).kind).toBe("allow");
    expect((await decide(perGroup, inGroup("G2"))).kind).toBe("drop");
  });
});

describe("groups", () => {
  const group = (
    channel: string,
    extra: Partial<InboundEnvelopeInput> = {},
  ): Partial<InboundEnvelopeInput> => ({
    channel,
    chatType: "group",
    peerId: "G1",
    senderId: "U1",
    text: "hi all",
    ...extra,
  });

  it("a missing channel block means allowlist with an empty list: every group is blocked", async () => {
    const channel = uniqueChannel();
    expect(await decide({}, group(channel, { wasMentioned: true }))).toMatchObject({
      kind: "drop",
      reason: expect.stringMatching(/empty allowlist/),
      configKey: `channels.${channel}.groups`,
    });
  });

  it("names the group allowlist by each channel's own key (Slack channels, Discord guilds)", async () => {
    // What `edgeclaw simulate` prints as "the config key that would change it": a key that exists.
    for (const [channel, key] of [
      ["slack", "channels.slack.channels"],
      ["discord", "channels.discord.guilds"],
      ["mattermost", "channels.mattermost.groups"],
    ])
      expect(await decide({}, group(channel!, { wasMentioned: true }))).toMatchObject({
        kind: "drop",
        reason: expect.stringMatching(/empty allowlist/),
        configKey: key,
      });
  });

  it("disabled drops groups", async () => {
    const channel = uniqueChannel();
    expect(
      (
        await decide(
          { channels: { [channel]: { groupPolicy: "disabled", groupAllowFrom: ["U1"] } } },
          group(channel, { wasMentioned: true }),
        )
      ).kind,
    ).toBe("drop");
  });

  it("allowlist: group map and sender lists", async () => {
    const channel = uniqueChannel();
    const config = {
      channels: {
        [channel]: { groups: { G1: { users: ["U1"] }, G2: { enabled: false }, G3: {} } },
      },
    };
    expect((await decide(config, group(channel, { wasMentioned: true }))).kind).toBe("allow");
    expect(
      (await decide(config, group(channel, { senderId: "U2", wasMentioned: true }))).kind,
    ).toBe("drop");
    expect((await decide(config, group(channel, { peerId: "G2", wasMentioned: true }))).kind).toBe(
      "drop",
    );
    expect(
      (
        await decide(
          config,
          group(channel, { peerId: "G3", senderId: "anyone", wasMentioned: true }),
        )
      ).kind,
    ).toBe("allow");
    expect((await decide(config, group(channel, { peerId: "G9", wasMentioned: true }))).kind).toBe(
      "drop",
    );
  });

  it("allowlist by groupAllowFrom with no group map", async () => {
    const channel = uniqueChannel();
    const config = { channels: { [channel]: { groupAllowFrom: ["U1"] } } };
    expect(await decide(config, group(channel, { wasMentioned: true }))).toMatchObject({
      kind: "allow",
      commandAuthorized: true,
    });
    expect(
      (await decide(config, group(channel, { senderId: "U2", wasMentioned: true }))).kind,
    ).toBe("drop");
  });

  it("opening DMs never opens groups where the group allowlist is the conversation map (Slack); Telegram and Teams fall back to allowFrom", async () => {
    const openDms = { dmPolicy: "open", allowFrom: ["*"] };
    const slackGroup = {
      channel: "slack",
      chatType: "channel" as const,
      peerId: "C0ANY",
      senderId: "U1",
      wasMentioned: true,
    };
    expect(await decide({ channels: { slack: openDms } }, slackGroup)).toMatchObject({
      kind: "drop",
      reason: expect.stringMatching(/empty allowlist/),
    });
    expect(
      (
        await decide(
          { channels: { slack: { dmPolicy: "allowlist", allowFrom: ["U1"] } } },
          slackGroup,
        )
      ).kind,
    ).toBe("drop");
    // Listing the channel is what admits it.
    expect(
      (await decide({ channels: { slack: { ...openDms, channels: { C0ANY: {} } } } }, slackGroup))
        .kind,
    ).toBe("allow");
    // Documented fallback: the owner's DM allowlist admits them (only them) in groups.
    const telegramGroup = {
      channel: "telegram",
      chatType: "group" as const,
      peerId: "-100123",
      senderId: "111",
      wasMentioned: true,
    };
    expect(
      (await decide({ channels: { telegram: { allowFrom: ["111"] } } }, telegramGroup)).kind,
    ).toBe("allow");
    expect(
      (
        await decide(
          { channels: { telegram: { allowFrom: ["111"] } } },
          { ...telegramGroup, senderId: "222" },
        )
      ).kind,
    ).toBe("drop");
  });

  it("an account's own Slack channels map replaces the root's (an empty one admits no channel)", async () => {
    const config = {
      channels: {
        slack: {
          channels: { "*": { requireMention: true } },
          accounts: { default: {}, locked: { channels: {} }, one: { channels: { C0ONE: {} } } },
        },
      },
    };
    const at = (accountId: string, peerId: string) => ({
      channel: "slack",
      accountId,
      chatType: "channel" as const,
      peerId,
      senderId: "U1",
      wasMentioned: true,
    });
    expect((await decide(config, at("default", "C0ANY"))).kind).toBe("allow");
    expect((await decide(config, at("locked", "C0ANY"))).kind).toBe("drop");
    expect((await decide(config, at("one", "C0ANY"))).kind).toBe("drop");
    expect((await decide(config, at("one", "C0ONE"))).kind).toBe("allow");
  });

  it("requireMention (default true): unmentioned messages are history-only; mention, pattern or command triggers", async () => {
    const channel = uniqueChannel();
    const config = {
      channels: { [channel]: { groupPolicy: "open" } },
      messages: { groupChat: { mentionPatterns: ["\\bclawd\\b", "(a+)+$"] } },
    };
    expect(await decide(config, group(channel))).toEqual({ kind: "history-only" });
    expect((await decide(config, group(channel, { wasMentioned: true }))).kind).toBe("allow");
    expect((await decide(config, group(channel, { text: "hey Clawd, help" }))).kind).toBe("allow");
    expect((await decide(config, group(channel, { text: "/status" }))).kind).toBe("allow");
    expect(
      (
        await decide(
          { channels: { [channel]: { groupPolicy: "open", requireMention: false } } },
          group(channel),
        )
      ).kind,
    ).toBe("allow");
    expect(
      (
        await decide(
          {
            channels: {
              [channel]: { groupPolicy: "open", groups: { "*": { requireMention: false } } },
            },
          },
          group(channel),
        )
      ).kind,
    ).toBe("allow");
  });

  it("channel mentionPatterns policy scopes the regex fallback; native mentions always count", async () => {
    const channel = uniqueChannel();
    const config = {
      messages: { groupChat: { mentionPatterns: ["clawd"] } },
      channels: {
        [channel]: { groupPolicy: "open", mentionPatterns: { mode: "deny", allowIn: ["G2"] } },
      },
    };
    expect((await decide(config, group(channel, { text: "clawd?" }))).kind).toBe("history-only");
    expect((await decide(config, group(channel, { peerId: "G2", text: "clawd?" }))).kind).toBe(
      "allow",
    );
    expect((await decide(config, group(channel, { wasMentioned: true }))).kind).toBe("allow");
  });

  it("an agent's own mention patterns take precedence", async () => {
    const channel = uniqueChannel();
    const config = {
      agents: {
        list: [{ id: "main", default: true, groupChat: { mentionPatterns: ["@family"] } }],
      },
      messages: { groupChat: { mentionPatterns: ["clawd"] } },
      channels: { [channel]: { groupPolicy: "open" } },
    };
    expect((await decide(config, group(channel, { text: "clawd?" }), T0, "main")).kind).toBe(
      "history-only",
    );
    expect((await decide(config, group(channel, { text: "@family hi" }), T0, "main")).kind).toBe(
      "allow",
    );
  });
});

describe("owner and command authorization", () => {
  it("commands.ownerAllowFrom names the owner; a wildcard never does", async () => {
    const channel = uniqueChannel();
    const base = { channels: { [channel]: { dmPolicy: "open", allowFrom: ["*"] } } };
    expect(
      await decide(
        { ...base, commands: { ownerAllowFrom: [`${channel}:U1`] } },
        { channel, senderId: "U1" },
      ),
    ).toMatchObject({ senderIsOwner: true });
    expect(
      await decide({ ...base, commands: { ownerAllowFrom: ["*"] } }, { channel, senderId: "U1" }),
    ).toMatchObject({ senderIsOwner: false });
  });

  it("a sender on a companion channel never matches a bare owner id: only `<channel>:<id>` names it owner there", async () => {
    const direct = uniqueChannel();
    const companion = uniqueChannel();
    const keys = { ingressKeys: [{ id: "k1", secret: "s", channels: [companion] }] };
    const base = {
      companion: keys,
      channels: {
        [direct]: { dmPolicy: "open", allowFrom: ["*"] },
        [companion]: { dmPolicy: "open", allowFrom: ["*"] },
      },
    };
    // The owner's id, written bare (meant for the directly verified channel).
    const bare = { ...base, commands: { ownerAllowFrom: ["OWNER1"] } };
    expect(await decide(bare, { channel: direct, senderId: "OWNER1" })).toMatchObject({
      senderIsOwner: true,
    });
    // Attacker: a leaked companion key posts that id on its channel; also as user:<id> and via an access group's "*" members.
    expect(await decide(bare, { channel: companion, senderId: "OWNER1" })).toMatchObject({
      senderIsOwner: false,
    });
    expect(
      await decide(
        { ...base, commands: { ownerAllowFrom: ["user:OWNER1"] } },
        { channel: companion, senderId: "OWNER1" },
      ),
    ).toMatchObject({ senderIsOwner: false });
    const group = {
      ...base,
      accessGroups: { owners: { type: "message.senders", members: { "*": ["OWNER1"] } } },
      commands: { ownerAllowFrom: ["accessGroup:owners"] },
    };
    expect(await decide(group, { channel: companion, senderId: "OWNER1" })).toMatchObject({
      senderIsOwner: false,
    });
    // Named with its channel, the companion sender is owner.
    expect(
      await decide(
        { ...base, commands: { ownerAllowFrom: [`${companion}:OWNER1`] } },
        { channel: companion, senderId: "OWNER1" },
      ),
    ).toMatchObject({ senderIsOwner: true });
    const scoped = {
      ...base,
      accessGroups: { owners: { type: "message.senders", members: { [companion]: ["OWNER1"] } } },
      commands: { ownerAllowFrom: ["accessGroup:owners"] },
    };
    expect(await decide(scoped, { channel: companion, senderId: "OWNER1" })).toMatchObject({
      senderIsOwner: true,
    });
  });

  it("commands.allowFrom, when set, is the only source of command authorization", async () => {
    const channel = uniqueChannel();
    const base = { channels: { [channel]: { dmPolicy: "allowlist", allowFrom: ["U1", "U2"] } } };
    const config = { ...base, commands: { allowFrom: { [channel]: ["U2"], "*": ["U1"] } } };
    expect(await decide(config, { channel, senderId: "U1" })).toMatchObject({
      kind: "allow",
      commandAuthorized: false,
    });
    expect(await decide(config, { channel, senderId: "U2" })).toMatchObject({
      kind: "allow",
      commandAuthorized: true,
    });
    expect(await decide(base, { channel, senderId: "U1" })).toMatchObject({
      kind: "allow",
      commandAuthorized: true,
    });
  });
});

describe("system events pass the same policy as a message from that sender", () => {
  const system = (
    channel: string,
    extra: Partial<InboundEnvelopeInput> = {},
  ): Partial<InboundEnvelopeInput> => ({
    channel,
    kind: "system",
    text: "Slack message edited by U1: hi",
    ...extra,
  });

  it("a DM stranger under pairing is dropped silently and never gets a pairing code", async () => {
    const channel = uniqueChannel();
    expect(await decide({}, system(channel, { senderId: "U1" }))).toMatchObject({
      kind: "drop",
      reason: expect.stringMatching(/system event/),
    });
    const pending = await withDb(env, (db) =>
      postgresAccessStore(db).listPairingRequests(channel, undefined, T0),
    );
    expect(pending).toEqual([]);
    // The sender's real message still gets the one code afterwards.
    expect((await decide({}, { channel, senderId: "U1" })).kind).toBe("pairing");
  });

  it("DM policies: disabled and allowlist drop, allowFrom and an approval admit, open admits", async () => {
    const channel = uniqueChannel();
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "disabled", allowFrom: ["U1"] } } },
          system(channel),
        )
      ).kind,
    ).toBe("drop");
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "allowlist", allowFrom: ["U2"] } } },
          system(channel),
        )
      ).kind,
    ).toBe("drop");
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "allowlist", allowFrom: ["U1"] } } },
          system(channel),
        )
      ).kind,
    ).toBe("allow");
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "open", allowFrom: ["*"] } } },
          system(channel),
        )
      ).kind,
    ).toBe("allow");
    await withDb(env, (db) =>
      postgresAccessStore(db).addApprovedSender(
        { channel, accountId: "default", senderId: "U1", source: "pairing" },
        T0,
      ),
    );
    expect((await decide({}, system(channel))).kind).toBe("allow");
  });

  it("groups: group policy, group allowlist and sender allowlist apply; mention gating does not", async () => {
    const channel = uniqueChannel();
    const config = {
      channels: { [channel]: { groups: { G1: { users: ["U1"] }, G2: { enabled: false } } } },
    };
    const inGroup = (extra: Partial<InboundEnvelopeInput>) =>
      system(channel, { chatType: "group", peerId: "G1", ...extra });
    // Unmentioned, yet allowed: it only becomes context, it never triggers a run.
    expect((await decide(config, inGroup({}))).kind).toBe("allow");
    expect((await decide(config, inGroup({ senderId: "U2" }))).kind).toBe("drop");
    expect((await decide(config, inGroup({ peerId: "G2" }))).kind).toBe("drop");
    expect((await decide(config, inGroup({ peerId: "G9" }))).kind).toBe("drop");
    expect(
      (
        await decide(
          { channels: { [channel]: { groupPolicy: "disabled", groupAllowFrom: ["U1"] } } },
          inGroup({}),
        )
      ).kind,
    ).toBe("drop");
  });

  it("a bot's system event needs allowBots, like its messages", async () => {
    const channel = uniqueChannel();
    const config = { channels: { [channel]: { dmPolicy: "open", allowFrom: ["*"] } } };
    expect((await decide(config, system(channel, { senderIsBot: true }))).kind).toBe("drop");
    expect(
      (
        await decide(
          { channels: { [channel]: { dmPolicy: "open", allowFrom: ["*"], allowBots: true } } },
          system(channel, { senderIsBot: true }),
        )
      ).kind,
    ).toBe("allow");
  });
});
