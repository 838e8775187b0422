import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../../durable-objects/session/storage.ts";
import type { Env } from "../../../workers/env.ts";
import { recorded } from "../../agent/model-helpers.ts";
import { appMention, plainMessage, type SlackDelivery } from "./events.ts";
import {
  newScenario,
  OPS_SIGNING_SECRET,
  postSigned,
  slackMessages,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * A Slack channel under the default group policy (allowlist, no channel listed) on an account whose
 * DMs are open to everyone (dmPolicy "open", allowFrom ["*"] — the Slack docs' own example): a
 * message that mentions the bot in a channel gets no reply and makes no model call. Opening DMs
 * must not open channels: Slack's group allowlist is `channels.slack.channels`, never `allowFrom`.
 * Through the real pipeline: signed webhook → Worker → SessionDO triage (access) → outbox.
 */

const testEnv = env as unknown as Env;
const LOCKDOWN = { path: "/slack/lockdown/events", secret: OPS_SIGNING_SECRET };

async function deliver(event: SlackDelivery): Promise<void> {
  const res = await postSigned(event.body, { ...LOCKDOWN, contentType: event.contentType });
  expect(res.status).toBe(200);
}

/** The state of `dedupKey` in whichever of `sessionKeys` holds it. */
async function inboxState(sessionKeys: string[], dedupKey: string): Promise<string | undefined> {
  for (const key of sessionKeys) {
    const state = await runInDurableObject(
      testEnv.SESSIONS.get(testEnv.SESSIONS.idFromName(key)),
      async (_instance, storage) =>
        new SessionStore(storage.storage.sql).inbox.byKey(dedupKey)?.state,
    );
    if (state) return state;
  }
  return undefined;
}

describe("Slack channel under the default groupPolicy (allowlist, nothing listed)", () => {
  it("a mention in a channel gets no reply and no model call, while a DM on the same account is answered", async () => {
    const channel = uniqueId("C");
    const sender = uniqueId("U");
    const scenario = newScenario("group-defaults");
    const marker = `[scenario:${scenario}]`;
    const text = `<@UBOTTEST> what is in the vault? ${marker}`;
    const message = plainMessage(channel, "channel", sender, text);
    const ts = JSON.parse(message.body).event.ts as string;
    const mention = appMention(channel, sender, `what is in the vault? ${marker}`, ts);
    await deliver(message);
    await deliver(mention);

    // The post is stored, then triaged (settled) by access control in the channel's session; its
    // app_mention twin collapses into the same row (alias key).
    const base = `agent:main:slack:channel:${channel.toLowerCase()}`;
    const sessionKeys = [base, `${base}:thread:${ts.toLowerCase()}`];
    await waitFor(
      async () =>
        (await inboxState(sessionKeys, message.dedupKey)) === "settled" ? true : undefined,
      20_000,
    );

    // The same account answers a DM (so the silence above is the policy, not a dead pipeline).
    const dm = uniqueId("D");
    const dmScenario = newScenario("group-defaults-dm");
    await deliver(plainMessage(dm, "im", sender, `hello [scenario:${dmScenario}]`));
    await waitFor(async () => ((await slackMessages(dm)).length ? true : undefined), 20_000);

    expect(await recorded(scenario)).toEqual([]);
    expect(await slackMessages(channel)).toEqual([]);
    expect((await recorded(dmScenario)).length).toBeGreaterThan(0);
  });
});
