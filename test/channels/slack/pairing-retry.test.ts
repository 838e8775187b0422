import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { inboundEnvelopeSchema } from "../../../functions/core/envelope.ts";
import { slackMessageKeys } from "../../../functions/channels/slack/parse.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { withDb } from "../../../functions/db/client.ts";
import { decideAccess } from "../../../functions/routing/access.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import type { Env } from "../../../workers/env.ts";
import {
  messageEvent,
  OPS_SIGNING_SECRET,
  postSigned,
  slackMessages,
  TEAM,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * Crash between the two steps of a pairing reply: the first triage of a DM inserted the pairing
 * request in Postgres, then the SessionDO died before it stored the reply row. The event is still
 * in the inbox, so triage runs again — and must send the code that was minted, once.
 */
const testEnv = env as unknown as Env;
const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("pairing code after a crash between the Postgres insert and the reply row", () => {
  it("the retried event sends the code its first attempt minted, exactly once", async () => {
    const channel = uniqueId("D");
    const stranger = uniqueId("U");
    const eventId = uniqueId("Ev");
    const ts = nowTs();
    // Step 1 of the first attempt, as the SessionDO's triage runs it for this very event; the
    // process then "dies": no reply row was written, nothing was posted.
    const envelope = inboundEnvelopeSchema.parse({
      ...slackMessageKeys(TEAM, channel, ts, eventId),
      channel: "slack",
      accountId: "pairing",
      chatType: "direct",
      peerId: stranger,
      senderId: stranger,
      text: "hello?",
      receivedAt: Date.now(),
      route: { channel: "slack", accountId: "pairing", to: channel },
    });
    const first = await withDb(testEnv, (db) =>
      decideAccess({
        config: configFromEnv(testEnv),
        envelope,
        store: postgresAccessStore(db),
        now: Date.now(),
        agentId: "main",
      }),
    );
    expect(first.kind).toBe("pairing");
    const code =
      first.kind === "pairing" ? /Pairing code: (\S+)/.exec(first.replyText)?.[1] : undefined;
    expect(code).toMatch(/^[A-Z2-9]{8}$/);
    expect(await slackMessages(channel)).toEqual([]);

    // The retry: the same event reaches triage again.
    const body = messageEvent({
      eventId,
      channel,
      channelType: "im",
      user: stranger,
      text: "hello?",
      ts,
    });
    expect(
      (await postSigned(body, { path: "/slack/pairing/events", secret: OPS_SIGNING_SECRET }))
        .status,
    ).toBe(200);
    const posted = await waitFor(async () => {
      const messages = await slackMessages(channel);
      return messages.length ? messages : undefined;
    });
    expect(posted).toHaveLength(1);
    expect(posted[0]!.text).toContain(`Pairing code: ${code}`);

    // A new message from the same sender while the code is pending stays silent, as before.
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        user: stranger,
        text: "anyone?",
        ts: nowTs(),
      }),
      {
        path: "/slack/pairing/events",
        secret: OPS_SIGNING_SECRET,
      },
    );
    await settle(1500);
    expect(await slackMessages(channel)).toHaveLength(1);
    const pending = await withDb(testEnv, (db) =>
      postgresAccessStore(db).listPairingRequests("slack", "pairing", Date.now()),
    );
    expect(
      pending.filter((request) => request.senderId === stranger).map((request) => request.code),
    ).toEqual([code]);
  });
});
