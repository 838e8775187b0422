import { describe, expect, it } from "vitest";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { collectRunEvents, scriptModel, sessionStub, waitFor, webchatEvent } from "./helpers.ts";
import { slackCalls, slackMessages, uniqueId } from "../channels/slack/helpers.ts";

describe("one session, several channels (dmScope main)", () => {
  it("answers each message on the route it came from", async () => {
    const key = `agent:main:multi-${crypto.randomUUID()}`;
    const dm = uniqueId("D");
    await scriptModel("multi-slack", [{ type: "text", text: "reply for slack" }]);
    const slackDm = inboundEnvelopeSchema.parse({
      dedupKey: `slack:TTEST:${uniqueId("Ev")}`,
      channel: "slack",
      chatType: "direct",
      peerId: dm,
      senderId: "UALICE",
      text: "from slack [scenario:multi-slack]",
      receivedAt: Date.now(),
      route: { channel: "slack", to: dm },
    });
    expect(
      await sessionStub(key).accept({ envelope: slackDm, agentId: "main", sessionKey: key }),
    ).toEqual({ status: "accepted" });
    // Streaming is on (the default): the preview becomes the answer; wait for the final text.
    const posted = await waitFor(async () => {
      const messages = await slackMessages(dm);
      return messages.some((m) => m.text === "reply for slack") ? messages : undefined;
    });
    expect(posted.map((m) => m.text)).toEqual(["reply for slack"]);

    await scriptModel("multi-web", [{ type: "text", text: "reply for the web chat" }]);
    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "from the web [scenario:multi-web]")),
    );
    expect(events.find((e) => e.type === "done")).toMatchObject({ text: "reply for the web chat" });

    // The web chat's answer went back on its HTTP stream only: nothing more was posted to Slack.
    const posts = await slackCalls("chat.postMessage", dm);
    expect(posts).toHaveLength(1);
    // Both turns are one conversation: the second model call saw the first exchange.
    const history = await sessionStub(key).history();
    expect(history.map((entry) => entry.text)).toEqual([
      "from slack [scenario:multi-slack]",
      "reply for slack",
      "from the web [scenario:multi-web]",
      "reply for the web chat",
    ]);
  });
});
