import { describe, expect, it } from "vitest";
import { handleCommandMessage, type CommandContext } from "../../functions/commands/execute.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { MemorySession } from "./memory-session.ts";

/** /approve decides a sandbox command waiting for approval: the owner only, never a stranger. */
function ctx(senderIsOwner: boolean): CommandContext {
  return {
    config: parseConfig({}),
    agentId: "main",
    sessionKey: "agent:main:slack:group:c1",
    sender: { channel: "slack", accountId: "default", senderId: "U9", chatType: "group" },
    senderIsOwner,
    now: Date.now(),
  };
}

describe("/approve", () => {
  it("a stranger (even one allowed to use commands) cannot approve: nothing reaches the session", async () => {
    const session = new MemorySession();
    const out = await handleCommandMessage(
      "/approve call_1 allow-once",
      { commandAuthorized: true },
      session,
      ctx(false),
    );
    expect(out.action === "reply" ? out.replies[0] : "").toContain("Only the owner can approve");
    expect(session.log.filter((entry) => entry.startsWith("approve:"))).toEqual([]);
  });

  it("the owner's decision reaches the session with the approver's identity", async () => {
    const session = new MemorySession();
    await handleCommandMessage(
      "/approve call_1 deny",
      { commandAuthorized: true },
      session,
      ctx(true),
    );
    await handleCommandMessage("/approve call_2", { commandAuthorized: true }, session, ctx(true));
    const bad = await handleCommandMessage(
      "/approve call_3 maybe",
      { commandAuthorized: true },
      session,
      ctx(true),
    );
    expect(session.log.filter((entry) => entry.startsWith("approve:"))).toEqual([
      "approve:call_1:deny:slack:U9",
      "approve:call_2:allow-once:slack:U9",
    ]);
    expect(bad.action === "reply" ? bad.replies[0] : "").toContain("Usage: /approve");
  });
});
