import { beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { handleCommandMessage } from "../../functions/commands/execute.ts";
import { sendDecision } from "../../functions/routing/send-policy.ts";
import { newScenario } from "../agent/model-helpers.ts";
import { slackCalls, uniqueId } from "../channels/slack/helpers.ts";
import {
  approveOpsSenders,
  collectRunEvents,
  modelRequests,
  opsDmEvent,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { MemorySession } from "./memory-session.ts";

/**
 * `/send on|off|inherit` and `session.sendPolicy` (OpenClaw's send policy): held-back replies are
 * still answered and kept in the transcript, but nothing — no preview, no typing, no answer —
 * reaches the chat until `/send on`. Only the owner changes it.
 */
const MEMBER = uniqueId("USEND");
beforeAll(() => approveOpsSenders(MEMBER));

async function say(key: string, text: string): Promise<string> {
  const events = await collectRunEvents(await sessionStub(key).chat(webchatEvent(key, text)));
  const done = events.find((event) => event.type === "done");
  return done?.type === "done" ? done.text : JSON.stringify(events);
}

describe("/send", () => {
  it("off: the run happens and is kept, but nothing reaches the chat until /send on", async () => {
    const key = `agent:main:send-${crypto.randomUUID().slice(0, 8)}`;
    const channel = uniqueId("D");
    expect(await say(key, "/send off")).toBe(
      "Send off: the agent's replies in this chat are held back (kept in the transcript) until /send on.",
    );
    const held = newScenario("send-held");
    await scriptModel(held, [{ type: "text", text: "This stays in the transcript." }]);
    const first = opsDmEvent(key, MEMBER, channel, `first question [scenario:${held}]`);
    await sessionStub(key).accept(first);
    await waitFor(
      async () =>
        (await sessionStub(key).eventDecision(first.envelope.dedupKey))?.state === "settled",
      25_000,
      "the held-back run to finish",
    );
    expect(await modelRequests(held)).toHaveLength(1);
    const history = JSON.stringify(await sessionStub(key).history());
    expect(history).toContain("This stays in the transcript.");
    expect(await say(key, "/status")).toContain("🔇 Replies held back (/send off) · /send on");
    expect(await say(key, "/send")).toBe(
      "Send: off (this session's /send). Options: on, off, inherit.",
    );

    expect(await say(key, "/send on")).toBe("Send on: replies reach this chat.");
    const shown = newScenario("send-shown");
    await scriptModel(shown, [{ type: "text", text: "Now you hear me." }]);
    await sessionStub(key).accept(opsDmEvent(key, MEMBER, channel, `second [scenario:${shown}]`));
    await waitFor(
      async () => JSON.stringify(await slackCalls(undefined, channel)).includes("Now you hear me."),
      25_000,
      "the answer after /send on",
    );
    // Nothing of the held-back run was ever sent: no post, no preview, no stream append.
    expect(JSON.stringify(await slackCalls(undefined, channel))).not.toContain(
      "stays in the transcript",
    );
    expect(await say(key, "/send inherit")).toBe("Send policy back to session.sendPolicy: on.");
  });

  it("is the owner's to change: anyone else is told so and nothing changes", async () => {
    const session = new MemorySession();
    const out = await handleCommandMessage("/send off", { commandAuthorized: true }, session, {
      config: parseConfig({}),
      agentId: "main",
      sessionKey: "agent:main:slack:group:c1",
      sender: { channel: "slack", accountId: "default", senderId: "U9", chatType: "group" },
      senderIsOwner: false,
      now: Date.now(),
    });
    expect(out).toEqual({
      action: "reply",
      replies: [
        "Only the owner can change the send policy (commands.ownerAllowFrom); nothing changed.",
      ],
    });
    expect((await session.getSettings()).sendPolicy).toBeUndefined();
  });
});

describe("session.sendPolicy", () => {
  const config = parseConfig({
    session: {
      sendPolicy: {
        default: "allow",
        rules: [
          { action: "deny", match: { channel: "discord", chatType: "group" } },
          { action: "allow", match: { keyPrefix: "discord:group:ops" } },
          { action: "deny", match: { rawKeyPrefix: "agent:quiet:" } },
        ],
      },
    },
  });
  it("denies on the first matching deny rule, then a matching allow, then the default; /send wins", () => {
    const group = {
      sessionKey: "agent:main:discord:group:ops-1",
      channel: "discord",
      chatType: "group",
    };
    expect(sendDecision(config, group, undefined)).toEqual({ allowed: false, reason: "rule" });
    expect(sendDecision(config, group, "allow")).toEqual({ allowed: true });
    expect(sendDecision(config, { ...group, chatType: "direct" }, undefined)).toEqual({
      allowed: true,
    });
    expect(
      sendDecision(
        config,
        { sessionKey: "agent:quiet:main", channel: "slack", chatType: "direct" },
        undefined,
      ),
    ).toEqual({ allowed: false, reason: "rule" });
    expect(
      sendDecision(
        config,
        { sessionKey: "agent:main:main", channel: "slack", chatType: "direct" },
        "deny",
      ),
    ).toEqual({ allowed: false, reason: "session" });
    const closed = parseConfig({ session: { sendPolicy: { default: "deny" } } });
    expect(
      sendDecision(closed, { sessionKey: "agent:main:main", channel: "slack" }, undefined),
    ).toEqual({
      allowed: false,
      reason: "default",
    });
    expect(() =>
      parseConfig({ session: { sendPolicy: { rules: [{ action: "mute", match: {} }] } } }),
    ).toThrow(/session\.sendPolicy\.rules/);
  });
});
