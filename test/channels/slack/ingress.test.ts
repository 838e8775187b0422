import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signSlackRequest } from "../../../functions/channels/slack/verify.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  BOT_USER,
  messageEvent,
  newScenario,
  OPS_SIGNING_SECRET,
  postSigned,
  scriptModel,
  settle,
  slackMessages,
  uniqueId,
  waitFor,
} from "./helpers.ts";

const dmEvent = (eventId: string, channel: string, ts = "1700000000.000100") =>
  messageEvent({ eventId, channel, channelType: "im", text: "hello there", ts });

describe("Slack Request URL", () => {
  it("answers url_verification with the challenge", async () => {
    const res = await postSigned(
      JSON.stringify({
        token: "t",
        challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmd",
        type: "url_verification",
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmd" });
  });

  it("answers the slash-command ssl_check with an empty 200", async () => {
    const res = await postSigned("ssl_check=1&token=legacy", {
      contentType: "application/x-www-form-urlencoded",
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  it("accepts a signed DM event durably, then reports Slack's retries as duplicates", async () => {
    const eventId = uniqueId("Ev");
    const body = dmEvent(eventId, uniqueId("D"));
    const first = await postSigned(body);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-openclaw-delivery-accepted")).toBe("durable");
    expect(first.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    for (const retry of ["1", "2"]) {
      const again = await postSigned(body, {
        headers: { "x-slack-retry-num": retry, "x-slack-retry-reason": "http_timeout" },
      });
      expect(again.status).toBe(200);
      expect(again.headers.get("x-edgeclaw-ingest")).toBe("duplicate");
    }
  });

  it("answers a DM once however often Slack retries it, before and after the answer", async () => {
    const scenario = newScenario("slack-retry-once");
    // Slow enough that the first retry lands while the run is still going.
    await scriptModel(scenario, [{ type: "text", text: "Answered once.", delayMs: 1_000 }]);
    const channel = uniqueId("D");
    const body = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "im",
      text: `hello [scenario:${scenario}]`,
      ts: `${Math.floor(Date.now() / 1000)}.000200`,
    });
    expect((await postSigned(body)).headers.get("x-edgeclaw-ingest")).toBe("accepted");
    const retry = (num: string) =>
      postSigned(body, {
        headers: { "x-slack-retry-num": num, "x-slack-retry-reason": "http_timeout" },
      });
    expect((await retry("1")).headers.get("x-edgeclaw-ingest")).toBe("duplicate");
    const answered = () =>
      slackMessages(channel).then((posted) =>
        posted.filter((m) => !m.deleted && m.text === "Answered once."),
      );
    await waitFor(async () => ((await answered()).length > 0 ? true : undefined), 20_000);
    expect((await retry("2")).headers.get("x-edgeclaw-ingest")).toBe("duplicate");
    await settle(1_500);
    expect(await answered()).toHaveLength(1);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("collapses app_mention and message for the same post into one event", async () => {
    const channel = "C0OPEN";
    const ts = `${Math.floor(Date.now() / 1000)}.${Math.floor(Math.random() * 1e6)}`;
    const text = `<@${BOT_USER}> what's up`;
    const mention = await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        type: "app_mention",
        text,
        ts,
      }),
    );
    expect(mention.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    const message = await postSigned(
      messageEvent({ eventId: uniqueId("Ev"), channel, channelType: "channel", text, ts }),
    );
    expect(message.status).toBe(200);
    expect(message.headers.get("x-edgeclaw-ingest")).toBe("duplicate");
  });

  it("rejects a bad signature with 401 and stores nothing", async () => {
    const eventId = uniqueId("Ev");
    const body = dmEvent(eventId, uniqueId("D"));
    const forged = await postSigned(body, { secret: "not-the-secret" });
    expect(forged.status).toBe(401);
    // Had the forged copy been stored, the genuine delivery would now be a duplicate.
    const genuine = await postSigned(body);
    expect(genuine.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  });

  it("rejects a stale timestamp with 401", async () => {
    const res = await postSigned(dmEvent(uniqueId("Ev"), uniqueId("D")), {
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "signature check failed: stale-timestamp" });
  });

  it("rejects a request without signature headers with 401", async () => {
    const res = await SELF.fetch("https://edgeclaw.test/slack/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: dmEvent(uniqueId("Ev"), uniqueId("D")),
    });
    expect(res.status).toBe(401);
  });

  it("refuses a body over 1 MiB with 413 before verifying it", async () => {
    const huge = JSON.stringify({ type: "event_callback", padding: "x".repeat(1024 * 1024) });
    const res = await postSigned(huge);
    expect(res.status).toBe(413);
  });

  it("answers 400 to a signed body that is not a Slack request", async () => {
    expect((await postSigned("{not json")).status).toBe(400);
    expect(
      (await postSigned(JSON.stringify({ type: "event_callback", event_id: "Ev1" }))).status,
    ).toBe(400);
    expect(
      (await postSigned("hello=world", { contentType: "application/x-www-form-urlencoded" }))
        .status,
    ).toBe(400);
  });

  it("serves each account on its own path with its own signing secret", async () => {
    const body = dmEvent(uniqueId("Ev"), uniqueId("D"));
    expect((await postSigned(body, { path: "/slack/ops/events" })).status).toBe(401);
    const ok = await postSigned(body, { path: "/slack/ops/events", secret: OPS_SIGNING_SECRET });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  });

  it("does not claim other paths or methods", async () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await SELF.fetch("https://edgeclaw.test/slack/other", {
      method: "POST",
      headers: {
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": await signSlackRequest("x", timestamp, "{}"),
      },
      body: "{}",
    });
    expect(res.status).not.toBe(401);
    expect((await SELF.fetch("https://edgeclaw.test/slack/events")).status).not.toBe(401);
  });

  it("drops the bot's own messages without enqueueing them", async () => {
    const res = await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: uniqueId("D"),
        channelType: "im",
        user: BOT_USER,
        text: "my own reply",
        ts: "1700000000.000200",
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edgeclaw-dropped")).toBe("own message");
    expect(res.headers.get("x-edgeclaw-ingest")).toBeNull();
  });

  it("accepts an interactivity payload as a system event", async () => {
    const payload = JSON.stringify({
      type: "block_actions",
      team: { id: "TTEST" },
      user: { id: "UHUMAN1", name: "ana" },
      channel: { id: uniqueId("C") },
      trigger_id: uniqueId("trig"),
      response_url: "https://hooks.slack.com/actions/T/1/x",
      actions: [{ action_id: "approve", type: "button", value: "yes" }],
    });
    const res = await postSigned(`payload=${encodeURIComponent(payload)}`, {
      contentType: "application/x-www-form-urlencoded",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-openclaw-delivery-accepted")).toBe("durable");
  });
});
