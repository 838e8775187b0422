import { describe, expect, it } from "vitest";
import { checkedEnvelope, clip, type InboundEnvelopeInput } from "../../functions/core/envelope.ts";

const input: InboundEnvelopeInput = {
  dedupKey: "test:1",
  channel: "test",
  chatType: "direct",
  peerId: "u1",
  senderId: "u1",
  text: "hi",
  receivedAt: 1,
  route: { channel: "test", to: "u1" },
};

describe("checkedEnvelope (every channel parser's last step)", () => {
  it("keeps a valid envelope with the schema's defaults filled in", () => {
    expect(checkedEnvelope(input)).toEqual({
      envelope: expect.objectContaining({
        dedupKey: "test:1",
        kind: "message",
        accountId: "default",
      }),
    });
  });

  it("drops one past a bound, naming the field, so it is acknowledged and never kept", () => {
    expect(checkedEnvelope({ ...input, senderId: "" })).toEqual({
      dropped: expect.stringMatching(/^envelope invalid: senderId: /),
    });
    expect(checkedEnvelope({ ...input, text: "x".repeat(200_001) })).toEqual({
      dropped: expect.stringMatching(/^envelope invalid: text: /),
    });
  });

  it("clips quoted platform text with a marked cut", () => {
    expect(clip("short", 10)).toBe("short");
    expect(clip("a longer text", 8)).toBe("a longer…");
  });
});
