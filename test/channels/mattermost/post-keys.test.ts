import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import { mattermostChannel } from "../../../functions/channels/mattermost/index.ts";
import type { OutboundMessage } from "../../../functions/channels/adapter.ts";
import {
  reconcileMattermostMessage,
  sendMattermostMessage,
} from "../../../functions/channels/mattermost/send.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { mattermostPosts, mmId, workerEnv } from "./helpers.ts";

/**
 * Outbox chunk ids are unique only within a session (every session's first notice is `notice:1:0`),
 * but Mattermost drops a repeated `pending_post_id` server-wide for 30 s and answers with the first
 * post. Two sessions sending their first notice at once must both be shown, each in its own channel.
 */

const ctx = () =>
  contextFor(
    mattermostChannel,
    {
      env: workerEnv as unknown as Record<string, unknown>,
      config: configFromEnv(workerEnv),
    },
    "team",
  );

function chunk(to: string, id: string, text: string, threadId?: string): OutboundMessage {
  return {
    id,
    route: { channel: "mattermost", accountId: "team", to, ...(threadId ? { threadId } : {}) },
    text,
    chunkIndex: 0,
    chunkCount: 1,
    queuedAt: Date.now(),
  };
}

describe("Mattermost post keys", () => {
  it("the same outbox id from two sessions (two channels, or a channel and its thread) posts twice, each where it belongs", async () => {
    const [a, b] = [mmId("ch"), mmId("ch")];
    const id = `notice:1:0:${mmId("k")}`;
    const first = await sendMattermostMessage(chunk(a, id, "to a"), ctx());
    const second = await sendMattermostMessage(chunk(b, id, "to b"), ctx());
    const inThread = await sendMattermostMessage(
      chunk(a, id, "to a's thread", "root00000000000000000000000"),
      ctx(),
    );
    expect([first, second, inThread].every((r) => r.ok)).toBe(true);
    expect((await mattermostPosts(a)).map((p) => p.message).sort()).toEqual([
      "to a",
      "to a's thread",
    ]);
    expect((await mattermostPosts(b)).map((p) => p.message)).toEqual(["to b"]);
    // A repeat of one chunk is still dropped by Mattermost, and reconcile finds the post it made.
    const repeat = await sendMattermostMessage(chunk(b, id, "to b"), ctx());
    expect(repeat).toMatchObject({
      ok: true,
      platformMessageId: "platformMessageId" in second ? second.platformMessageId : "",
    });
    expect(await mattermostPosts(b)).toHaveLength(1);
    expect(await reconcileMattermostMessage(chunk(b, id, "to b"), ctx())).toMatchObject({
      outcome: "landed",
      platformMessageId: "platformMessageId" in second ? second.platformMessageId : "",
    });
  });
});
