import type { SlackBotIdentity } from "./parse.ts";
import { slackClient } from "./client.ts";

/**
 * The bot's own user id and bot id, learned with `auth.test` at first use and cached in isolate
 * memory per token. A cold isolate asks again (one extra call); that is cheaper than a storage
 * round trip on the ack path, and the answer never changes for a token. A failed lookup is not
 * cached, and the event is still parsed (mentions are then detected from `app_mention` only).
 */
const cache = new Map<string, Promise<SlackBotIdentity>>();

export function slackBotIdentity(token: string | undefined, apiBaseUrl: string): Promise<SlackBotIdentity> {
  if (!token) return Promise.resolve({});
  const key = `${apiBaseUrl}\u0000${token}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = slackClient(token, apiBaseUrl)
      .auth.test()
      .then((result) => ({ userId: result.user_id, botId: result.bot_id }))
      .catch((error: unknown) => {
        cache.delete(key);
        console.warn("slack auth.test failed", error instanceof Error ? error.message : error);
        return {};
      });
    cache.set(key, pending);
  }
  return pending;
}
