import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { resolveAgentRoute, type RouteResult } from "../../functions/routing/resolve-route.ts";
import { buildSessionKey } from "../../functions/routing/session-key.ts";
import { envelope } from "./helpers.ts";

function route(result: RouteResult) {
  if ("rejected" in result) throw new Error(`rejected: ${result.rejected}`);
  return result;
}

const agents = {
  list: ["main", "peer", "parent", "wild", "roles", "guild", "team", "acct", "chan"].map((id) => ({
    id,
    default: id === "main",
  })),
};

describe("bindings precedence", () => {
  // Every binding below could match the same Discord thread message; the tiers decide.
  const all = [
    { agentId: "chan", match: { channel: "discord", accountId: "*" } },
    { agentId: "acct", match: { channel: "discord", accountId: "work" } },
    { agentId: "team", match: { channel: "discord", accountId: "*", teamId: "G1" } },
    { agentId: "guild", match: { channel: "discord", accountId: "*", guildId: "G1" } },
    {
      agentId: "roles",
      match: { channel: "discord", accountId: "*", guildId: "G1", roles: ["R1"] },
    },
    {
      agentId: "wild",
      match: { channel: "discord", accountId: "*", peer: { kind: "channel", id: "*" } },
    },
    {
      agentId: "parent",
      match: { channel: "discord", accountId: "*", peer: { kind: "channel", id: "PARENT" } },
    },
    {
      agentId: "peer",
      match: { channel: "discord", accountId: "*", peer: { kind: "channel", id: "THREAD" } },
    },
  ];
  const message = envelope({
    channel: "discord",
    accountId: "work",
    chatType: "channel",
    peerId: "THREAD",
    parentPeerId: "PARENT",
    teamId: "G1",
  });

  const table: Array<[string, string, string]> = [
    ["peer", "binding.peer", "exact peer beats everything"],
    ["parent", "binding.peer.parent", "parent peer is next"],
    ["wild", "binding.peer.wildcard", "then peer *"],
    ["roles", "binding.guild+roles", "then guild + roles"],
    ["guild", "binding.guild", "then guild"],
    ["team", "binding.team", "then team"],
    ["acct", "binding.account", "then the exact account"],
    ["chan", "binding.channel", 'then accountId "*"'],
  ];
  table.forEach(([agentId, matchedBy, why], index) => {
    it(`${why} (${agentId})`, () => {
      // Remove the bindings of every more specific tier.
      const remaining = all.filter(
        (b) => !table.slice(0, index).some(([skip]) => skip === b.agentId),
      );
      const config = parseConfig({ agents, bindings: remaining });
      const result = route(resolveAgentRoute(config, message, { senderRoles: ["R1"] }));
      expect(result.agentId).toBe(agentId);
      expect(result.matchedBy).toBe(matchedBy);
    });
  });

  it("falls back to the default agent", () => {
    const config = parseConfig({ agents, bindings: [] });
    expect(route(resolveAgentRoute(config, message)).agentId).toBe("main");
    expect(route(resolveAgentRoute(config, message)).matchedBy).toBe("default");
  });

  it("without roles facts a guild+roles binding does not match", () => {
    const config = parseConfig({ agents, bindings: [all[4], all[3]] });
    expect(route(resolveAgentRoute(config, message)).agentId).toBe("guild");
  });

  it("inside one tier the first binding in config order wins", () => {
    const config = parseConfig({
      agents,
      bindings: [
        { agentId: "team", match: { channel: "discord", accountId: "*" } },
        { agentId: "chan", match: { channel: "discord", accountId: "*" } },
      ],
    });
    expect(route(resolveAgentRoute(config, message)).agentId).toBe("team");
  });

  it("omitting accountId matches only the default account", () => {
    const config = parseConfig({
      agents,
      bindings: [{ agentId: "acct", match: { channel: "discord" } }],
    });
    expect(route(resolveAgentRoute(config, message)).agentId).toBe("main");
    expect(route(resolveAgentRoute(config, envelope({ channel: "discord" }))).agentId).toBe("acct");
  });

  it("all fields of a binding must match (AND)", () => {
    const config = parseConfig({
      agents,
      bindings: [
        {
          agentId: "peer",
          match: {
            channel: "discord",
            accountId: "*",
            teamId: "OTHER",
            peer: { kind: "channel", id: "THREAD" },
          },
        },
      ],
    });
    expect(route(resolveAgentRoute(config, message)).agentId).toBe("main");
  });

  it("ignores bindings to unknown agents and other channels", () => {
    const config = parseConfig({
      agents,
      bindings: [
        { agentId: "ghost", match: { channel: "discord", accountId: "*" } },
        { agentId: "peer", match: { channel: "slack", accountId: "*" } },
      ],
    });
    expect(route(resolveAgentRoute(config, message)).agentId).toBe("main");
  });

  it('rejects unmatched events when agents.ownership is "explicit"', () => {
    const config = parseConfig({ agents: { ...agents, ownership: "explicit" }, bindings: [] });
    const result = resolveAgentRoute(config, message);
    expect("rejected" in result && result.rejected).toMatch(/explicit/);
  });
});

describe("session keys", () => {
  const dm = envelope({
    channel: "telegram",
    accountId: "Biz",
    senderId: "User9",
    peerId: "User9",
  });
  const keyFor = (session: Record<string, unknown>, e = dm, extra: Record<string, unknown> = {}) =>
    route(resolveAgentRoute(parseConfig({ session, ...extra }), e)).sessionKey;

  it("dmScope main (default) folds every DM into agent:<id>:main", () => {
    expect(keyFor({})).toBe("agent:main:main");
    expect(keyFor({}, envelope({ channel: "slack", senderId: "U2", peerId: "U2" }))).toBe(
      "agent:main:main",
    );
  });
  it("per-peer", () => expect(keyFor({ dmScope: "per-peer" })).toBe("agent:main:direct:user9"));
  it("per-channel-peer", () =>
    expect(keyFor({ dmScope: "per-channel-peer" })).toBe("agent:main:telegram:direct:user9"));
  it("per-account-channel-peer", () =>
    expect(keyFor({ dmScope: "per-account-channel-peer" })).toBe(
      "agent:main:telegram:biz:direct:user9",
    ));

  it("groups and channels carry no account", () => {
    expect(
      keyFor(
        {},
        envelope({ channel: "telegram", accountId: "biz", chatType: "group", peerId: "-100123" }),
      ),
    ).toBe("agent:main:telegram:group:-100123");
    expect(keyFor({}, envelope({ channel: "slack", chatType: "channel", peerId: "C0ABC" }))).toBe(
      "agent:main:slack:channel:c0abc",
    );
  });

  it("threads and Telegram topics", () => {
    expect(
      keyFor(
        {},
        envelope({ channel: "discord", chatType: "channel", peerId: "123456", threadId: "987654" }),
      ),
    ).toBe("agent:main:discord:channel:123456:thread:987654");
    expect(
      keyFor(
        {},
        envelope({
          channel: "telegram",
          chatType: "group",
          peerId: "-1001234567890",
          threadId: "42",
        }),
      ),
    ).toBe("agent:main:telegram:group:-1001234567890:topic:42");
  });

  it("identityLinks fold one person's DMs across channels (non-main scopes only)", () => {
    const identityLinks = { alice: ["telegram:User9", "discord:555"] };
    expect(keyFor({ dmScope: "per-peer", identityLinks })).toBe("agent:main:direct:alice");
    expect(
      keyFor(
        { dmScope: "per-peer", identityLinks },
        envelope({ channel: "discord", senderId: "555", peerId: "555" }),
      ),
    ).toBe("agent:main:direct:alice");
    expect(keyFor({ dmScope: "main", identityLinks })).toBe("agent:main:main");
  });

  it("a binding's session.dmScope overrides the global one and the agent id is in the key", () => {
    const config = parseConfig({
      agents: { list: [{ id: "main", default: true }, { id: "Support" }] },
      bindings: [
        {
          agentId: "Support",
          match: { channel: "telegram", accountId: "*" },
          session: { dmScope: "per-channel-peer" },
        },
      ],
    });
    expect(route(resolveAgentRoute(config, dm)).sessionKey).toBe(
      "agent:support:telegram:direct:user9",
    );
  });

  it("normalises odd agent ids", () => {
    expect(
      buildSessionKey({
        agentId: "My Agent!",
        channel: "slack",
        chatType: "direct",
        peerId: "x",
        dmScope: "main",
      }),
    ).toBe("agent:my-agent:main");
  });
});
