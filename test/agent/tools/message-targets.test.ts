import { describe, expect, it } from "vitest";
import {
  parseMessageTarget,
  targetMatches,
} from "../../../functions/agent/tools/message-targets.ts";

describe("message tool targets (OpenClaw's --target forms)", () => {
  it("reads the prefixed, mention, resource-name and bare forms", () => {
    expect(parseMessageTarget("slack", "user:U123")).toEqual({ kind: "user", id: "U123" });
    expect(parseMessageTarget("discord", "channel:42")).toEqual({ kind: "chat", id: "42" });
    expect(parseMessageTarget("discord", "<@!42>")).toEqual({ kind: "user", id: "42" });
    expect(parseMessageTarget("msteams", "conversation:19:abc@thread.tacv2")).toEqual({
      kind: "chat",
      id: "19:abc@thread.tacv2",
    });
    expect(parseMessageTarget("googlechat", "spaces/AAA")).toEqual({
      kind: "chat",
      id: "spaces/AAA",
    });
    expect(parseMessageTarget("googlechat", "users/7")).toEqual({ kind: "user", id: "users/7" });
    expect(parseMessageTarget("telegram", "telegram:-1001")).toEqual({ kind: "any", id: "-1001" });
    expect(parseMessageTarget("sms", "+15551234567")).toEqual({ kind: "any", id: "+15551234567" });
  });

  it("refuses names and empty ids", () => {
    expect(parseMessageTarget("telegram", "@someone")).toHaveProperty("error");
    expect(parseMessageTarget("slack", "#general")).toHaveProperty("error");
    expect(parseMessageTarget("slack", "user:")).toHaveProperty("error");
  });

  it("matches a person only in a direct chat, a chat id by the route", () => {
    const dm = { chatType: "direct", to: "D1", senderId: "U1" };
    const group = { chatType: "group", to: "C1", senderId: "U1" };
    expect(targetMatches({ kind: "user", id: "U1" }, dm)).toBe(true);
    expect(targetMatches({ kind: "user", id: "U1" }, group)).toBe(false);
    expect(targetMatches({ kind: "chat", id: "C1" }, group)).toBe(true);
    expect(targetMatches({ kind: "any", id: "D1" }, dm)).toBe(true);
    expect(targetMatches({ kind: "any", id: "C2" }, group)).toBe(false);
  });
});
