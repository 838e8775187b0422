import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OutboundMessage, SendContext } from "../../../functions/channels/adapter.ts";
import { fetchSmsMedia } from "../../../functions/channels/sms/media.ts";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import type { SmsAccount } from "../../../functions/channels/sms/config.ts";
import { smsChannel } from "../../../functions/channels/sms/index.ts";
import {
  reconcileSms,
  RECONCILE_MAX_PAGES,
  sendSms,
} from "../../../functions/channels/sms/send.ts";
import { suiteConfig } from "../../agent/model-helpers.ts";
import {
  fakeTwilio,
  scriptTwilio,
  strangerNumber,
  TEST_TWILIO,
  twilioCalls,
  twilioMedia,
  twilioMessages,
} from "./helpers.ts";

/** Outbound Twilio SMS against the fake Messages API, with the suite's config (channels.sms in test-config.ts). */
const base = { env: env as unknown as Record<string, unknown>, config: suiteConfig };
/** What the pipeline hands the channel for one account (channel-account.ts). */
const ctxFor = (accountId: string): SendContext<SmsAccount> =>
  contextFor(smsChannel, base, accountId);
const ctx = ctxFor("default");

let counter = 0;
function chunk(to: string, text: string, fields: Partial<OutboundMessage> = {}): OutboundMessage {
  counter += 1;
  return {
    id: `out-${Date.now()}-${counter}`,
    route: { channel: "sms", accountId: "default", to },
    text,
    chunkIndex: 0,
    chunkCount: 1,
    queuedAt: Date.now(),
    ...fields,
  };
}

async function seed(to: string, body: string, ageMs = 0) {
  await fetch(`${fakeTwilio()}/_control/seed`, {
    method: "POST",
    body: JSON.stringify({
      accountSid: TEST_TWILIO.accountSid,
      to,
      from: TEST_TWILIO.fromNumber,
      body,
      ageMs,
    }),
  });
}

describe("sending SMS through the Messages API", () => {
  it("posts plain text from the account's number with Basic auth, and returns the message SID", async () => {
    const to = strangerNumber();
    const result = await sendSms(chunk(to, "**Done**: see [the log](https://x.test/log)"), ctx);
    expect(result).toMatchObject({
      ok: true,
      platformMessageId: expect.stringMatching(/^SM[0-9a-f]{32}$/),
    });
    const [message] = await twilioMessages(to);
    expect(message).toMatchObject({
      to,
      from: TEST_TWILIO.fromNumber,
      body: "Done: see the log (https://x.test/log)",
      messaging_service_sid: null,
    });
    const [call] = await twilioCalls("messages.create", to);
    expect(call!.auth).toBe(`…${TEST_TWILIO.authToken.slice(-4)}`);
    // No publicWebhookUrl on the default account: no status callback asked for.
    expect(call!.args.StatusCallback).toBeUndefined();
  });

  it("sends through the Messaging Service when the account has no number", async () => {
    const to = strangerNumber();
    expect(
      (
        await sendSms(
          chunk(to, "via service", { route: { channel: "sms", accountId: "service", to } }),
          ctxFor("service"),
        )
      ).ok,
    ).toBe(true);
    const [message] = await twilioMessages(to);
    expect(message).toMatchObject({
      from: null,
      messaging_service_sid: TEST_TWILIO.messagingServiceSid,
      body: "via service",
    });
  });

  it("asks for status callbacks at the public URL's /status when publicWebhookUrl is set", async () => {
    const to = strangerNumber();
    await sendSms(
      chunk(to, "tracked", { route: { channel: "sms", accountId: "proxied", to } }),
      ctxFor("proxied"),
    );
    const [call] = await twilioCalls("messages.create", to);
    expect(call!.args.StatusCallback).toBe(
      "https://sms.example.com/twilio/inbound/status?acct=proxied#rc=3&rp=5xx",
    );
    expect(call!.args.From).toBe(TEST_TWILIO.proxiedFromNumber);
  });

  it("classifies failures: 429 and 5xx retry, 502/504 must be reconciled, other 4xx are final", async () => {
    const to = strangerNumber();
    await scriptTwilio({ method: "messages.create", to, status: 429, retryAfter: 2 });
    expect(await sendSms(chunk(to, "a"), ctx)).toMatchObject({
      ok: false,
      retryable: true,
      retryAfterMs: 2000,
    });
    await scriptTwilio({ method: "messages.create", to, status: 503 });
    expect(await sendSms(chunk(to, "a"), ctx)).toMatchObject({ ok: false, retryable: true });
    await scriptTwilio({ method: "messages.create", to, status: 504 });
    expect(await sendSms(chunk(to, "a"), ctx)).toMatchObject({ ok: false, outcomeUnknown: true });
    await scriptTwilio({ method: "messages.create", to, status: 400, code: 21610 });
    expect(await sendSms(chunk(to, "a"), ctx)).toMatchObject({
      ok: false,
      retryable: false,
      error: expect.stringContaining("21610"),
    });
    expect(await twilioMessages(to)).toHaveLength(0);
  });

  it("refuses to send without credentials for the route's account", async () => {
    expect(
      await sendSms(
        chunk("+15550000000", "x", {
          route: { channel: "sms", accountId: "nobody", to: "+15550000000" },
        }),
        ctxFor("nobody"),
      ),
    ).toMatchObject({ ok: false, retryable: false });
  });
});

describe("reconciling an SMS whose outcome is unknown", () => {
  it("finds a message that landed although the connection dropped, by its body", async () => {
    const to = strangerNumber();
    await scriptTwilio({ method: "messages.create", to, dropConnection: true });
    const message = chunk(to, "Landed *quietly*.");
    expect(await sendSms(message, ctx)).toMatchObject({ ok: false, outcomeUnknown: true });
    const [landed] = await twilioMessages(to);
    expect(await reconcileSms(message, ctx)).toEqual({
      outcome: "landed",
      platformMessageId: landed!.sid,
    });
  });

  it("reports missing when nothing was sent, and when the same text went out before the chunk was queued", async () => {
    const to = strangerNumber();
    await seed(to, "Same words.", 10 * 60_000);
    expect(await reconcileSms(chunk(to, "Same words."), ctx)).toEqual({ outcome: "missing" });
    expect(await reconcileSms(chunk(strangerNumber(), "Never sent."), ctx)).toEqual({
      outcome: "missing",
    });
  });

  it("reads back through several pages of newer messages to the same number", async () => {
    const to = strangerNumber();
    const message = chunk(to, "Deep in the log.");
    await seed(to, "Deep in the log.");
    for (let i = 0; i < 120; i++) await seed(to, `chatter ${i}`);
    expect(await reconcileSms(message, ctx)).toMatchObject({ outcome: "landed" });
    expect((await twilioCalls("messages.list")).filter((c) => c.args.To === to)).toHaveLength(3);
  });

  it("gives up (untraceable, not re-sent) past its page budget instead of guessing", async () => {
    const to = strangerNumber();
    const message = chunk(to, "Buried.");
    await seed(to, "Buried.");
    for (let i = 0; i < RECONCILE_MAX_PAGES * 50 + 1; i++) await seed(to, `noise ${i}`);
    expect(await reconcileSms(message, ctx)).toMatchObject({
      outcome: "untraceable",
      idempotent: false,
    });
  });

  it("throws (ask again later) when Twilio cannot be asked", async () => {
    const to = strangerNumber();
    await scriptTwilio({ method: "messages.list", status: 500 });
    await expect(reconcileSms(chunk(to, "x"), ctx)).rejects.toThrow(/HTTP 500/);
  });
});

describe("downloading MMS media", () => {
  const route = (to: string) => ({ channel: "sms", accountId: "default", to });

  it("downloads a text attachment with the account's credentials and follows Twilio's redirect without them", async () => {
    const url = await twilioMedia({
      content: "BEGIN:VCARD\nFN:Ana\nEND:VCARD",
      contentType: "text/vcard",
    });
    const result = await fetchSmsMedia(
      { url, mimeType: "text/vcard" },
      route(strangerNumber()),
      ctx,
    );
    expect(result).toEqual({ text: "BEGIN:VCARD\nFN:Ana\nEND:VCARD" });
    const id = url.split("/").at(-1);
    const [media] = (await twilioCalls("media")).filter((c) => c.args.MediaSid === id);
    expect(media!.auth).toBe(`…${TEST_TWILIO.authToken.slice(-4)}`);
    const storage = (await twilioCalls("storage")).filter((c) => c.args.id === id);
    expect(storage).toEqual([expect.objectContaining({ args: { id, authorization: "absent" } })]);
  });

  it("refuses media over mediaMaxMb before reading it", async () => {
    const url = await twilioMedia({
      bytes: 6 * 1024 * 1024,
      contentLength: 6 * 1024 * 1024,
      contentType: "text/plain",
    });
    expect(
      await fetchSmsMedia({ url, mimeType: "text/plain" }, route(strangerNumber()), ctx),
    ).toEqual({ skipped: "larger than mediaMaxMb (5 MB)" });
  });

  it("never sends the credentials to a host that is not Twilio's API", async () => {
    const before = (await twilioCalls()).length;
    expect(
      await fetchSmsMedia(
        {
          url: "https://evil.example/2010-04-01/Accounts/AC/Messages/MM/Media/ME1",
          mimeType: "text/plain",
        },
        route(strangerNumber()),
        ctx,
      ),
    ).toEqual({
      skipped: "refusing to send Twilio credentials to evil.example",
    });
    expect(
      await fetchSmsMedia(
        {
          url: "http://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME1",
          mimeType: "text/plain",
        },
        route(strangerNumber()),
        ctx,
      ),
    ).toMatchObject({ skipped: expect.stringContaining("refusing") });
    expect((await twilioCalls()).length).toBe(before);
  });
});
