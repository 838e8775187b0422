import { describe, expect, it } from "vitest";
import { decideHook } from "../../functions/automation/hook-request.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";

/** `hooks.presets: ["gmail"]` serves /hooks/gmail without a hand-written mapping; a user's mapping on the same path wins. */
const gmailBody = {
  messages: [
    {
      id: "18c2",
      from: "Ada <ada@example.com>",
      subject: "Invoice 42",
      snippet: "Please find attached",
    },
  ],
};

describe("hooks.presets", () => {
  it("gmail: an agent turn with sender, subject and snippet, in a fresh session", () => {
    const decision = decideHook(
      parseConfig({ hooks: { enabled: true, presets: ["gmail"] } }),
      "gmail",
      gmailBody,
    );
    expect(decision).toMatchObject({
      ok: true,
      action: {
        kind: "agent",
        name: "Gmail",
        message: "New email from Ada <ada@example.com>\nSubject: Invoice 42\nPlease find attached",
        sessionKey: undefined,
      },
    });
  });

  it("without the preset /hooks/gmail is unknown; a mapping on the same path overrides the preset", () => {
    expect(decideHook(parseConfig({ hooks: { enabled: true } }), "gmail", gmailBody)).toMatchObject(
      { ok: false, status: 404 },
    );
    const own = parseConfig({
      hooks: {
        enabled: true,
        presets: ["gmail"],
        mappings: [
          { match: { path: "gmail" }, name: "Mine", messageTemplate: "{{messages[0].subject}}" },
        ],
      },
    });
    expect(decideHook(own, "gmail", gmailBody)).toMatchObject({
      ok: true,
      action: { name: "Mine", message: "Invoice 42" },
    });
  });

  it("refuses an unknown preset name at config load", () => {
    expect(() => parseConfig({ hooks: { presets: ["outlook"] } })).toThrow();
  });
});
