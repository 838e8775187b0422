/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.sms`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.sms` pointed at the fake Twilio API (functions/channels/sms/simulate/twilio-api.ts), with the defaults a user
 * gets (dmPolicy "pairing", textChunkLimit 1500, no publicWebhookUrl: the URL the Worker sees is the
 * one verified). The numbers in `allowFrom` talk to the agent; any other number is a stranger and
 * gets a pairing code. "proxied" sits behind a proxy: Twilio signs its `publicWebhookUrl`, not the
 * URL the Worker receives. "service" sends through a Messaging Service instead of a number.
 */
export const TEST_TWILIO = {
  accountSid: "AC0000000000000000000000000000beef",
  authToken: "test-twilio-auth-token",
  fromNumber: "+15550001000",
  proxiedFromNumber: "+15550002000",
  messagingServiceSid: "MG0000000000000000000000000000beef",
  proxiedPublicUrl: "https://sms.example.com/twilio/inbound?acct=proxied",
  /** Allowlisted senders, one per test that needs its own conversation. */
  allowed: Array.from({ length: 12 }, (_, i) => `+1555010${String(i + 1).padStart(4, "0")}`),
} as const;
