import {
  chatEvent,
  googleToken,
  TEST_GOOGLECHAT,
  uniqueId,
  visibleTexts,
  type SignOptions,
} from "../../googlechat/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

/** Google Chat HTTP endpoints: a Google-signed bearer JWT whose audience is the app URL. */

async function bearer(body: unknown, sign: SignOptions = {}): Promise<WireRequest> {
  return {
    path: "/googlechat",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${await googleToken(sign)}`,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

function dmEvent(sender: string, text: string) {
  const space = `spaces/DM${uniqueId("c")}`;
  return { space, event: chatEvent({ space, dm: true, sender, text }) };
}

export const googleChatKit: ChannelKit = {
  channel: "googlechat",
  async dm(who, text) {
    const sender = who === "allowed" ? TEST_GOOGLECHAT.owner : `users/${uniqueId("stranger")}`;
    const { space, event } = dmEvent(sender, text);
    return {
      request: await bearer(event),
      conversation: space,
      senderId: sender,
      accountId: "default",
    };
  },
  async forged(text) {
    const { event } = dmEvent(TEST_GOOGLECHAT.owner, text);
    return { request: await bearer(event, { forged: true }), twin: await bearer(event) };
  },
  async stale(text) {
    const { event } = dmEvent(TEST_GOOGLECHAT.owner, text);
    return { request: await bearer(event, { expiresInSeconds: -3600 }), twin: await bearer(event) };
  },
  async oversized(text, bytes) {
    const { event } = dmEvent(TEST_GOOGLECHAT.owner, text);
    const body = JSON.stringify(event);
    return { request: await bearer(body + " ".repeat(bytes)), twin: await bearer(body) };
  },
  malformed: () => bearer({ type: "MESSAGE", space: { name: "nope" } }),
  replies: visibleTexts,
};
