import { describe, expect, it } from "vitest";
import { newScenario } from "../agent/model-helpers.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import {
  collectRunEvents,
  modelRequests,
  opsDmEvent,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";

/**
 * A stranger sends the commands that reach the model or change the session — /skill, /tools,
 * /think, /reasoning, /model — in a Slack channel whose allowlist names one other member
 * (C0MEMBERS, users ["UMEMBER"]). Access decides first: each is refused, never a command, so
 * nothing reaches the model, no tool list or skill text is shown, and no setting changes. (A group
 * mints no pairing code, so this file takes none of the account's three pending slots.)
 */
function strangerInChannel(key: string, stranger: string, text: string): RoutedEvent {
  const event = opsDmEvent(key, stranger, "C0MEMBERS", text);
  const route = { ...event.envelope.route, accountId: "default" };
  route.extra = { ...route.extra, chatType: "group" };
  return {
    ...event,
    envelope: {
      ...event.envelope,
      accountId: "default",
      chatType: "group",
      peerId: "C0MEMBERS",
      route,
    },
  };
}

describe("commands from a stranger", () => {
  it("are refused by access control: no model call, no reply, no setting changed", async () => {
    const key = `agent:main:stranger-${crypto.randomUUID().slice(0, 8)}`;
    const stranger = uniqueId("USTRANGER");
    const scenario = newScenario("stranger-commands");
    const texts = [
      `/skill weather tomorrow [scenario:${scenario}]`,
      `/tools verbose [scenario:${scenario}]`,
      "/think max",
      "/reasoning on",
      "/model fakeopenai/gpt-test",
    ];
    const events = texts.map((text) => strangerInChannel(key, stranger, text));
    for (const event of events)
      expect(await sessionStub(key).accept(event)).toMatchObject({ status: "accepted" });
    for (const event of events) {
      const decision = await waitFor(
        async () => {
          const found = await sessionStub(key).eventDecision(event.envelope.dedupKey);
          return found && found.outcome !== "pending" ? found : undefined;
        },
        20_000,
        `the decision on "${event.envelope.text}"`,
      );
      expect(decision.outcome).toBe("refused");
    }
    expect(await modelRequests(scenario)).toEqual([]);
    const shown = (await slackMessages("C0MEMBERS")).map((message) => message.text).join("\n");
    expect(shown).not.toMatch(/Tools available|skills\/weather|Thinking level|Reasoning|Model set/);
    const status = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "/status")),
    );
    const card = status.find((event) => event.type === "done");
    const text = card?.type === "done" ? card.text : "";
    expect(text).toContain("💭 Think: off · Reasoning: off");
    expect(text).not.toContain("session override");
  });
});
