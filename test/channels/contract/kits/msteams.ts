import {
  activity,
  fakeTeams,
  messageTexts,
  teamsToken,
  TEST_MSTEAMS,
  uniqueId,
  type SignOptions,
} from "../../msteams/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

/** Bot Framework messaging endpoint: a Bot Connector JWT whose serviceUrl claim matches the body's. */

async function bearer(body: unknown, sign: SignOptions = {}): Promise<WireRequest> {
  return {
    path: "/api/messages",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${await teamsToken(sign)}`,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

function dmActivity(sender: string, text: string) {
  const conversation = `a:${uniqueId("dm")}`;
  return { conversation, body: activity({ kind: "personal", conversation, sender, text }) };
}

export const msTeamsKit: ChannelKit = {
  channel: "msteams",
  async dm(who, text) {
    const sender = who === "allowed" ? TEST_MSTEAMS.owner : uniqueId("aad-stranger-");
    const { conversation, body } = dmActivity(sender, text);
    return { request: await bearer(body), conversation, senderId: sender, accountId: "default" };
  },
  async forged(text) {
    const { body } = dmActivity(TEST_MSTEAMS.owner, text);
    return { request: await bearer(body, { forged: true }), twin: await bearer(body) };
  },
  async stale(text) {
    const { body } = dmActivity(TEST_MSTEAMS.owner, text);
    return { request: await bearer(body, { expiresInSeconds: -3600 }), twin: await bearer(body) };
  },
  // JSON with the token's serviceUrl but no activity in it (not-JSON is 401: the serviceUrl the
  // token must match cannot be read).
  async oversized(text, bytes) {
    const raw = JSON.stringify(dmActivity(TEST_MSTEAMS.owner, text).body);
    return { request: await bearer(raw + " ".repeat(bytes)), twin: await bearer(raw) };
  },
  malformed: () => bearer({ type: "message", serviceUrl: fakeTeams() }),
  replies: messageTexts,
};
