import { describe, expect, it } from "vitest";
import {
  smsAccount,
  smsChannelSchema,
  smsSecrets,
} from "../../../functions/channels/sms/config.ts";
import {
  parseInboundMessage,
  parseStatusCallback,
  readForm,
} from "../../../functions/channels/sms/parse.ts";
import { inboundSms, sid, TEST_TWILIO } from "./helpers.ts";

const sms = smsChannelSchema.parse({
  accountSid: TEST_TWILIO.accountSid,
  authToken: "t",
  fromNumber: TEST_TWILIO.fromNumber,
});
const account = smsAccount(sms, "default");
const secrets = smsSecrets(account, {});
const parse = (params: Array<[string, string]>) =>
  parseInboundMessage(params, { account, secrets, receivedAt: 1_000 });

describe("Twilio inbound message → envelope", () => {
  it("turns an SMS into one direct-message envelope keyed by MessageSid, answered to the sender", () => {
    const messageSid = sid();
    const result = parse(inboundSms({ from: "+15557654321", body: "hello there", messageSid }));
    expect(result.kind).toBe("message");
    if (result.kind !== "message") return;
    expect(result.envelope).toMatchObject({
      dedupKey: `sms:default:${messageSid}`,
      channel: "sms",
      accountId: "default",
      chatType: "direct",
      peerId: "+15557654321",
      senderId: "+15557654321",
      text: "hello there",
      messageId: messageSid,
      route: {
        channel: "sms",
        accountId: "default",
        to: "+15557654321",
        replyToMessageId: messageSid,
      },
    });
    expect(result.envelope.attachments).toBeUndefined();
  });

  it("lists MMS media (NumMedia, MediaUrl<n>, MediaContentType<n>) as attachments, at most 10", () => {
    const media = Array.from({ length: 12 }, (_, i) => ({
      url: `https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME${i}`,
      contentType: i % 2 ? "image/jpeg" : "text/plain",
    }));
    const result = parse(inboundSms({ from: "+15557654321", body: "", media }));
    if (result.kind !== "message") throw new Error(result.kind);
    expect(result.envelope.attachments).toHaveLength(10);
    expect(result.envelope.attachments![1]).toEqual({
      name: "MMS attachment 2",
      url: media[1]!.url,
      mimeType: "image/jpeg",
    });
    expect(result.envelope.text).toBe("");
  });

  it("leaves STOP, its synonyms, START and HELP to Twilio: nothing to store", () => {
    for (const body of [
      "STOP",
      " stop ",
      "Unsubscribe",
      "cancel",
      "END",
      "quit",
      "STOPALL",
      "optout",
      "revoke",
      "START",
      "unstop",
      "HELP",
      "info",
    ]) {
      expect(parse(inboundSms({ from: "+15557654321", body }))).toEqual({
        kind: "dropped",
        reason: "opt-out/help keyword: handled by Twilio",
      });
    }
    // Advanced Opt-Out names the keyword itself.
    expect(
      parse(inboundSms({ from: "+15557654321", body: "ARRET", extra: [["OptOutType", "STOP"]] }))
        .kind,
    ).toBe("dropped");
  });

  it("passes a conversational yes, and a sentence containing stop, to the agent", () => {
    expect(parse(inboundSms({ from: "+15557654321", body: "yes" })).kind).toBe("message");
    expect(parse(inboundSms({ from: "+15557654321", body: "please stop the timer" })).kind).toBe(
      "message",
    );
  });

  it("drops a signed callback for another account or another sender number", () => {
    expect(parse(inboundSms({ from: "+15557654321", body: "hi", accountSid: sid("AC") }))).toEqual({
      kind: "dropped",
      reason: "AccountSid is not this account's",
    });
    expect(parse(inboundSms({ from: "+15557654321", body: "hi", to: "+15550009999" })).kind).toBe(
      "dropped",
    );
  });

  it("on a Messaging Service account, takes messages carrying its MessagingServiceSid and drops others", () => {
    const service = smsChannelSchema.parse({
      accountSid: TEST_TWILIO.accountSid,
      authToken: "t",
      messagingServiceSid: TEST_TWILIO.messagingServiceSid,
    });
    const serviceAccount = smsAccount(service, "default");
    const serviceSecrets = smsSecrets(serviceAccount, {});
    const viaService = (extra: Array<[string, string]>) =>
      parseInboundMessage(
        inboundSms({ from: "+15557654321", body: "hi", to: "+15550004444", extra }),
        { account: serviceAccount, secrets: serviceSecrets, receivedAt: 1 },
      );
    expect(viaService([["MessagingServiceSid", TEST_TWILIO.messagingServiceSid]]).kind).toBe(
      "message",
    );
    expect(viaService([["MessagingServiceSid", sid("MG")]]).kind).toBe("dropped");
    expect(viaService([]).kind).toBe("dropped");
  });

  it("calls a form without MessageSid, AccountSid or From malformed", () => {
    const without = (name: string) =>
      inboundSms({ from: "+15557654321", body: "x" }).filter(
        ([key]) => key !== name && !(name === "MessageSid" && key === "SmsSid"),
      );
    expect(parse(without("MessageSid")).kind).toBe("malformed");
    expect(parse(without("AccountSid")).kind).toBe("malformed");
    expect(parse(without("From")).kind).toBe("malformed");
  });

  it("reads only form bodies in UTF-8", () => {
    expect(readForm(new TextEncoder().encode("Body=hi"), "application/json")).toMatchObject({
      ok: false,
    });
    expect(
      readForm(
        new Uint8Array([0x42, 0x6f, 0x64, 0x79, 0x3d, 0xff]),
        "application/x-www-form-urlencoded",
      ),
    ).toMatchObject({ ok: false, reason: "body is not UTF-8" });
    expect(
      readForm(
        new TextEncoder().encode("Body=caf%C3%A9+au+lait"),
        "application/x-www-form-urlencoded; charset=utf-8",
      ),
    ).toEqual({ ok: true, params: [["Body", "café au lait"]] });
  });
});

describe("Twilio delivery status callbacks", () => {
  it("reads the message id, status and error code, for this account only", () => {
    const messageSid = sid();
    expect(
      parseStatusCallback(
        [
          ["MessageSid", messageSid],
          ["MessageStatus", "undelivered"],
          ["ErrorCode", "30034"],
          ["AccountSid", TEST_TWILIO.accountSid],
        ],
        secrets,
      ),
    ).toEqual({
      ok: true,
      status: { messageSid, status: "undelivered", errorCode: "30034" },
    });
    expect(
      parseStatusCallback(
        [
          ["MessageSid", messageSid],
          ["MessageStatus", "sent"],
          ["AccountSid", sid("AC")],
        ],
        secrets,
      ).ok,
    ).toBe(false);
  });
});

describe("channels.sms config", () => {
  it("has OpenClaw's defaults and normalises sms:/twilio-sms: allowlist entries", () => {
    const parsed = smsChannelSchema.parse({
      allowFrom: [
        "twilio-sms:+1 (555) 765-4321",
        "sms:+15550001111",
        "+44 20 7946 0958",
        "accessGroup:family",
      ],
    });
    expect(parsed).toMatchObject({
      enabled: true,
      dmPolicy: "pairing",
      webhookPath: "/webhooks/sms",
      textChunkLimit: 1500,
      mediaMaxMb: 5,
      apiBaseUrl: "https://api.twilio.com",
      dangerouslyDisableSignatureValidation: false,
    });
    expect(parsed.allowFrom).toEqual([
      "sms:+15557654321",
      "sms:+15550001111",
      "+442079460958",
      "accessGroup:family",
    ]);
  });

  it("refuses a public URL with user:password@ and a chunk limit over Twilio's 1600", () => {
    expect(
      smsChannelSchema.safeParse({ publicWebhookUrl: "https://u:p@gw.example.com/webhooks/sms" })
        .success,
    ).toBe(false);
    expect(smsChannelSchema.safeParse({ textChunkLimit: 1601 }).success).toBe(false);
    expect(smsChannelSchema.safeParse({ dmPolicy: "open" }).success).toBe(false);
  });

  it("takes the Twilio env fallbacks for the default account only; the config wins", () => {
    const multi = smsChannelSchema.parse({
      fromNumber: "+15550000001",
      accounts: { default: {}, other: { webhookPath: "/webhooks/sms/other" } },
    });
    const env = {
      TWILIO_ACCOUNT_SID: "ACenv",
      TWILIO_AUTH_TOKEN: "env-token",
      TWILIO_PHONE_NUMBER: "+15550000002",
      SMS_PUBLIC_WEBHOOK_URL: "https://gw.example.com/webhooks/sms",
    };
    expect(smsSecrets(smsAccount(multi, "default"), env)).toMatchObject({
      accountSid: "ACenv",
      authToken: "env-token",
      fromNumber: "+15550000001",
      publicWebhookUrl: "https://gw.example.com/webhooks/sms",
    });
    expect(smsSecrets(smsAccount(multi, "other"), env)).toMatchObject({
      accountSid: undefined,
      authToken: undefined,
    });
    expect(
      smsSecrets(smsAccount(multi, "default"), { TWILIO_SMS_FROM: "+15550000003" }).fromNumber,
    ).toBe("+15550000001");
  });
});
