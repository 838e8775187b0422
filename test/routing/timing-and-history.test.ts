import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import {
  appendHistory,
  CURRENT_MESSAGE_HEADER,
  formatWithGroupHistory,
  HISTORY_CONTEXT_HEADER,
  resolveHistoryLimit,
  type HistoryEntry,
} from "../../functions/routing/group-history.ts";
import {
  lastDailyBoundary,
  resolveResetPolicy,
  sessionResetDue,
} from "../../functions/routing/session-reset.ts";

const MIN = 60_000;
const at = (iso: string) => Date.parse(iso);

describe("session resets", () => {
  it("mode none (default) never resets", () => {
    const policy = resolveResetPolicy(parseConfig({}), { channel: "slack", chatType: "direct" });
    expect(sessionResetDue({ policy, sessionStartedAt: 0, now: 10 ** 13 })).toEqual({
      reset: false,
    });
  });

  it("daily resets at atHour (4 by default) after the session started before that boundary", () => {
    const policy = resolveResetPolicy(parseConfig({ session: { reset: { mode: "daily" } } }), {
      channel: "slack",
      chatType: "direct",
    });
    const started = at("2026-03-01T03:00:00Z");
    expect(
      sessionResetDue({ policy, sessionStartedAt: started, now: at("2026-03-01T03:59:59Z") }),
    ).toEqual({ reset: false });
    expect(
      sessionResetDue({ policy, sessionStartedAt: started, now: at("2026-03-01T04:00:00Z") }),
    ).toEqual({ reset: true, reason: "daily" });
    // A session started after today's boundary lives until tomorrow's.
    const later = at("2026-03-01T05:00:00Z");
    expect(
      sessionResetDue({ policy, sessionStartedAt: later, now: at("2026-03-02T03:59:00Z") }),
    ).toEqual({ reset: false });
    expect(
      sessionResetDue({ policy, sessionStartedAt: later, now: at("2026-03-02T04:00:00Z") }).reset,
    ).toBe(true);
  });

  it("atHour is local time in the configured zone", () => {
    expect(lastDailyBoundary(at("2026-07-01T12:00:00Z"), 4, "America/New_York")).toBe(
      at("2026-07-01T08:00:00Z"),
    );
    expect(lastDailyBoundary(at("2026-07-01T07:00:00Z"), 4, "America/New_York")).toBe(
      at("2026-06-30T08:00:00Z"),
    );
  });

  it("idle resets after idleMinutes without a real interaction; only lastInteractionAt counts", () => {
    const policy = resolveResetPolicy(
      parseConfig({ session: { reset: { mode: "idle", idleMinutes: 30 } } }),
      { channel: "slack", chatType: "direct" },
    );
    const started = at("2026-03-01T10:00:00Z");
    const lastInteractionAt = started + 20 * MIN;
    expect(
      sessionResetDue({
        policy,
        sessionStartedAt: started,
        lastInteractionAt,
        now: lastInteractionAt + 29 * MIN,
      }).reset,
    ).toBe(false);
    expect(
      sessionResetDue({
        policy,
        sessionStartedAt: started,
        lastInteractionAt,
        now: lastInteractionAt + 30 * MIN,
      }),
    ).toEqual({ reset: true, reason: "idle" });
    // No interaction recorded: falls back to the start.
    expect(
      sessionResetDue({ policy, sessionStartedAt: started, now: started + 30 * MIN }).reset,
    ).toBe(true);
  });

  it("daily + idleMinutes: whichever expires first", () => {
    const policy = resolveResetPolicy(
      parseConfig({ session: { reset: { mode: "daily", atHour: 4, idleMinutes: 10 } } }),
      { channel: "x", chatType: "direct" },
    );
    const started = at("2026-03-01T05:00:00Z");
    expect(
      sessionResetDue({
        policy,
        sessionStartedAt: started,
        lastInteractionAt: started,
        now: started + 11 * MIN,
      }),
    ).toEqual({ reset: true, reason: "idle" });
  });

  it("resetByChannel replaces resetByType, which replaces session.reset", () => {
    const config = parseConfig({
      session: {
        reset: { mode: "daily", atHour: 4 },
        resetByType: {
          group: { mode: "idle", idleMinutes: 120 },
          thread: { mode: "daily", atHour: 6 },
        },
        resetByChannel: { discord: { mode: "idle", idleMinutes: 10080 } },
      },
    });
    expect(resolveResetPolicy(config, { channel: "slack", chatType: "direct" })).toMatchObject({
      mode: "daily",
      atHour: 4,
    });
    expect(resolveResetPolicy(config, { channel: "slack", chatType: "group" })).toMatchObject({
      mode: "idle",
      idleMinutes: 120,
    });
    expect(
      resolveResetPolicy(config, { channel: "slack", chatType: "channel", threadId: "t" }),
    ).toMatchObject({ mode: "daily", atHour: 6 });
    expect(resolveResetPolicy(config, { channel: "discord", chatType: "group" })).toMatchObject({
      mode: "idle",
      idleMinutes: 10080,
    });
  });
});

describe("group history", () => {
  const entry = (n: number) => ({
    senderId: `U${n}`,
    senderName: `User ${n}`,
    text: `message ${n}`,
    at: n,
  });

  it("historyLimit resolves account → channel → messages.groupChat (50)", () => {
    const target = {
      channel: "slack",
      accountId: "work",
      chatType: "group" as const,
      peerId: "C1",
    };
    expect(resolveHistoryLimit(parseConfig({}), target)).toBe(50);
    expect(
      resolveHistoryLimit(parseConfig({ messages: { groupChat: { historyLimit: 7 } } }), target),
    ).toBe(7);
    expect(
      resolveHistoryLimit(parseConfig({ channels: { slack: { historyLimit: 5 } } }), target),
    ).toBe(5);
    expect(
      resolveHistoryLimit(
        parseConfig({
          channels: { slack: { historyLimit: 5, accounts: { work: { historyLimit: 2 } } } },
        }),
        target,
      ),
    ).toBe(2);
    expect(
      resolveHistoryLimit(parseConfig({ channels: { slack: { dmHistoryLimit: 3 } } }), {
        ...target,
        chatType: "direct",
      }),
    ).toBe(3);
  });

  it("the buffer keeps the newest historyLimit entries; 0 disables", () => {
    let buffer: HistoryEntry[] = [entry(1)];
    for (const n of [2, 3, 4]) buffer = appendHistory(buffer, entry(n), 3);
    expect(buffer.map((e) => e.text)).toEqual(["message 2", "message 3", "message 4"]);
    expect(appendHistory(buffer, entry(5), 0)).toEqual([]);
  });

  it("formats pending history with OpenClaw's wrapper strings and sender labels", () => {
    const text = formatWithGroupHistory({
      history: [entry(1), entry(2), entry(3)],
      current: entry(9),
      chatType: "group",
      limit: 2,
    });
    expect(text).toBe(
      [
        HISTORY_CONTEXT_HEADER,
        "User 2 (U2): message 2",
        "User 3 (U3): message 3",
        "",
        CURRENT_MESSAGE_HEADER,
        "User 9 (U9): message 9",
      ].join("\n"),
    );
    expect(HISTORY_CONTEXT_HEADER).toBe("[Chat messages since your last reply - for context]");
    expect(CURRENT_MESSAGE_HEADER).toBe("[Current message - respond to this]");
    expect(
      formatWithGroupHistory({ history: [], current: entry(9), chatType: "direct", limit: 50 }),
    ).toBe("message 9");
  });
});
