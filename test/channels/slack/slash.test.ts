import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { newScenario, postSigned, scriptModel, slackCalls, uniqueId, waitFor } from "./helpers.ts";
import { sessionStub } from "../../durable-objects/helpers.ts";
import { UNDELIVERED_NOTICE } from "../../../durable-objects/session/outbox/deliver-due.ts";

const fakeSlack = () => String((env as unknown as Env).FAKE_SLACK_URL);

describe("Slack slash command", () => {
  it("runs in the sender's slash session and answers through response_url, ephemeral", async () => {
    const scenario = newScenario("slash");
    await scriptModel(scenario, [{ type: "text", text: "Slash answer" }]);
    const user = uniqueId("U");
    const responsePath = `/response/${uniqueId("R")}`;
    const form = new URLSearchParams({
      token: "legacy",
      team_id: "TTEST",
      channel_id: "C0OPEN",
      channel_name: "general",
      user_id: user,
      user_name: "alice",
      command: "/openclaw",
      text: `what's up [scenario:${scenario}]`,
      response_url: `${fakeSlack()}${responsePath}`,
      trigger_id: uniqueId("T"),
    });
    const res = await postSigned(form.toString(), {
      contentType: "application/x-www-form-urlencoded",
    });
    expect(res.status).toBe(200);

    const reply = await waitFor(async () => {
      const calls = (await slackCalls("response_url")).filter(
        (call) => call.args.path === responsePath,
      );
      return calls.length ? calls : undefined;
    });
    expect(reply).toHaveLength(1);
    expect(reply[0]!.args).toMatchObject({ text: "Slash answer", response_type: "ephemeral" });
    // The conversation lives in the slash session, not in the channel's session.
    const history = await sessionStub(`agent:main:slack:slash:${user.toLowerCase()}`).history();
    expect(history.map((entry) => entry.text)).toContain("Slash answer");
    expect(
      await slackCalls("chat.postMessage", "C0OPEN").then((calls) =>
        calls.filter((c) => String(c.args.text).includes("Slash answer")),
      ),
    ).toHaveLength(0);
  });

  it("does not answer twice when a response_url reply's outcome is lost; tells the user once instead", async () => {
    const scenario = newScenario("slash-lost");
    await scriptModel(scenario, [{ type: "text", text: "Answer that landed" }]);
    const user = uniqueId("U");
    const responsePath = `/response/${uniqueId("R")}`;
    await fetch(`${fakeSlack()}/_control/script`, {
      method: "POST",
      body: JSON.stringify({ method: "response_url", dropConnection: true }),
    });
    const form = new URLSearchParams({
      token: "legacy",
      team_id: "TTEST",
      channel_id: "C0OPEN",
      user_id: user,
      user_name: "bob",
      command: "/openclaw",
      text: `hi [scenario:${scenario}]`,
      response_url: `${fakeSlack()}${responsePath}`,
      trigger_id: uniqueId("T"),
    });
    expect(
      (await postSigned(form.toString(), { contentType: "application/x-www-form-urlencoded" }))
        .status,
    ).toBe(200);
    const replies = await waitFor(async () => {
      const calls = (await slackCalls("response_url")).filter(
        (call) => call.args.path === responsePath,
      );
      return calls.length >= 2 ? calls : undefined;
    }, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const texts = (await slackCalls("response_url"))
      .filter((call) => call.args.path === responsePath)
      .map((call) => call.args.text);
    expect(replies[0]!.args.text).toBe("Answer that landed");
    expect(texts).toEqual(["Answer that landed", UNDELIVERED_NOTICE]);
  });
});
