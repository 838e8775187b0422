import type { SlackBotIdentity } from "./parse-context.ts";
import type { SlackEventCallback } from "./payloads.ts";
import { slackClient } from "./client.ts";

/**
 * Who the bot is, read from the event itself: the ack path may not wait on Slack. Every Events API
 * callback names the app (`api_app_id`) and one installation that can see the event
 * (`authorizations[0]`); for a bot install that entry's `user_id` is the bot user. It is trusted
 * only when it belongs to the event's own workspace (or to the org of an org-wide install): in a
 * shared channel Slack may name another workspace's installation, whose bot user is a different id.
 */
export function slackBotIdentityFromCallback(callback: SlackEventCallback): SlackBotIdentity {
  const own = (callback.authorizations ?? []).find(
    (entry) =>
      entry.is_bot === true &&
      entry.user_id !== undefined &&
      (entry.team_id === callback.team_id ||
        (entry.is_enterprise_install === true &&
          !!entry.enterprise_id &&
          entry.enterprise_id === callback.enterprise_id)),
  );
  return { userId: own?.user_id, appId: callback.api_app_id };
}

/** How long a lookup may take before the caller goes on without it. */
export const AUTH_TEST_TIMEOUT_MS = 5_000;
/** How long a failed lookup is remembered, so an outage costs one call per minute, not one per event. */
export const AUTH_TEST_FAILURE_TTL_MS = 60_000;

type Cached = { identity: Promise<SlackBotIdentity>; failedAt?: number };
const cache = new Map<string, Cached>();

/**
 * The bot's user id and bot id from `auth.test`, for work that runs after the ack (inside the
 * SessionDO), never on the webhook path. Cached per token for the isolate's life; a failure or a
 * timeout answers "unknown" and is cached for AUTH_TEST_FAILURE_TTL_MS.
 */
export function slackBotIdentity(
  token: string | undefined,
  apiBaseUrl: string,
  now = Date.now(),
): Promise<SlackBotIdentity> {
  if (!token) return Promise.resolve({});
  const key = `${apiBaseUrl}\u0000${token}`;
  const cached = cache.get(key);
  if (cached && (cached.failedAt === undefined || now - cached.failedAt < AUTH_TEST_FAILURE_TTL_MS))
    return cached.identity;
  const entry: Cached = { identity: Promise.resolve({}) };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`auth.test took longer than ${AUTH_TEST_TIMEOUT_MS} ms`)),
      AUTH_TEST_TIMEOUT_MS,
    );
  });
  entry.identity = Promise.race([slackClient(token, apiBaseUrl).auth.test(), timeout])
    .then((result): SlackBotIdentity => ({ userId: result.user_id, botId: result.bot_id }))
    .catch((error: unknown) => {
      entry.failedAt = Date.now();
      console.warn("slack auth.test failed", error instanceof Error ? error.message : error);
      return {};
    })
    .finally(() => {
      if (timer !== undefined) clearTimeout(timer);
    });
  if (cache.size > 64) cache.clear();
  cache.set(key, entry);
  return entry.identity;
}
