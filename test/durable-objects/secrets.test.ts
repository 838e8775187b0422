import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  webchatEvent,
} from "./helpers.ts";

/** Every secret the test Worker holds (config SecretRefs and bindings). */
const SECRETS = [
  "test-gateway-token",
  "test-anthropic-key",
  "test-openai-key",
  "xoxb-test-default",
  "test-slack-signing-secret",
  "xoxb-test-ops",
  "test-slack-ops-signing-secret",
  "test-companion-secret",
];

describe("secrets stay in their place", () => {
  it("never reach the model (prompt, messages, tool results) or the transcript", async () => {
    const key = `agent:main:secrets-${crypto.randomUUID()}`;
    await scriptModel("secrets", [
      { type: "tool_calls", calls: [{ id: "call_s", name: "session_status", arguments: {} }] },
      { type: "text", text: "done" },
    ]);
    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "what can you see? [scenario:secrets]")),
    );
    expect(events.find((e) => e.type === "done")).toMatchObject({ text: "done" });

    const requests = await modelRequests("secrets");
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      const body = JSON.stringify(request.body);
      for (const secret of SECRETS) expect(body).not.toContain(secret);
    }
    const transcript = JSON.stringify(await sessionStub(key).history(1000));
    for (const secret of SECRETS) expect(transcript).not.toContain(secret);
  });
});
