/**
 * Discord's REST rate limits, read ahead of time
 * (https://discord.com/developers/docs/topics/rate-limits): every answer names its bucket
 * (`X-RateLimit-Bucket`, shared by routes that share a limit, counted per major parameter: channel,
 * guild, webhook) with `X-RateLimit-Remaining` and `X-RateLimit-Reset-After` (seconds); a 429 says
 * whether the limit is global (`X-RateLimit-Global` / `global: true`, every route of the bot) and how
 * long to wait (`Retry-After`). When a bucket is known to be empty, the next call on it is held back
 * before it is made (rest.ts answers it as a local 429 the outbox waits out) instead of earning a
 * real 429 — Discord counts those, and enough of them bans the IP for an hour.
 *
 * Where the state lives: this is a hint kept in isolate memory, not in the SessionDO's storage.
 * Nothing depends on it for correctness: Discord's own 429 stays the authority and is waited out
 * as before, so a hint lost with its isolate costs at most one real 429 per bucket. In practice the
 * hint sits where the sends are: a channel's message bucket is counted per channel, and one
 * SessionDO (one isolate) sends a conversation's replies.
 */

/** More than any one isolate meets; past it, expired entries go first, then the oldest. */
const MAX_ENTRIES = 1000;

interface BucketState {
  remaining: number;
  resetAt: number;
}

const bucketOfRoute = new Map<string, string>();
const buckets = new Map<string, BucketState>();
const globalUntil = new Map<string, number>();

/** A call's identity for rate limits: the bot (token's first segment, its user id, not the secret), the route, its major parameter. */
export interface RateLimitKey {
  bot: string;
  /** `POST /channels/{major}/messages` with other ids replaced: routes of one shape share a bucket. */
  route: string;
  major: string;
}

export function rateLimitKey(
  token: string | undefined,
  method: string,
  path: string,
): RateLimitKey {
  const bare = path.replace(/\?.*$/, "");
  const major =
    /^\/(channels|guilds)\/(\d+)/.exec(bare)?.[0] ??
    /^\/webhooks\/\d+\/[^/]+/.exec(bare)?.[0] ??
    "";
  const rest = bare.slice(major.length).replace(/\/\d{5,25}(?=\/|$)/g, "/:id");
  // An interaction webhook's token is its major parameter; the key keeps only its tail.
  const majorKey = major.startsWith("/webhooks/")
    ? major.replace(/\/[^/]+$/, (t) => `/…${t.slice(-8)}`)
    : major;
  return { bot: token?.split(".")[0] ?? "webhook", route: `${method} ${rest}`, major: majorKey };
}

/** How long to hold a call back (ms), 0 when it may go now, and the bucket that holds it. */
export function heldFor(key: RateLimitKey, now = Date.now()): { waitMs: number; bucket?: string } {
  const global = globalUntil.get(key.bot) ?? 0;
  if (global > now) return { waitMs: global - now, bucket: "global" };
  const bucket = bucketOfRoute.get(`${key.bot} ${key.route}`);
  if (!bucket) return { waitMs: 0 };
  const state = buckets.get(`${key.bot} ${bucket} ${key.major}`);
  if (!state || state.remaining > 0 || state.resetAt <= now) return { waitMs: 0 };
  return { waitMs: state.resetAt - now, bucket };
}

/** What an answer's headers (and a 429's body) say about its bucket, remembered for the next call. */
export function recordRateLimit(
  key: RateLimitKey,
  headers: Headers,
  status: number,
  body: { retry_after?: number; global?: boolean } | undefined,
  now = Date.now(),
): void {
  const retryAfter = seconds(headers.get("retry-after")) ?? body?.retry_after;
  if (
    status === 429 &&
    (headers.get("x-ratelimit-global") === "true" || body?.global === true) &&
    retryAfter !== undefined
  ) {
    globalUntil.set(key.bot, now + Math.ceil(retryAfter * 1000));
    prune(globalUntil, (until) => until <= now);
    return;
  }
  const bucket = headers.get("x-ratelimit-bucket");
  if (!bucket) return;
  bucketOfRoute.set(`${key.bot} ${key.route}`, bucket);
  const remaining = Number(headers.get("x-ratelimit-remaining"));
  const resetAfter =
    seconds(headers.get("x-ratelimit-reset-after")) ?? (status === 429 ? retryAfter : undefined);
  if (resetAfter === undefined) return;
  buckets.set(`${key.bot} ${bucket} ${key.major}`, {
    remaining: status === 429 ? 0 : Number.isFinite(remaining) ? remaining : 1,
    resetAt: now + Math.ceil(resetAfter * 1000),
  });
  prune(buckets, (state) => state.resetAt <= now);
  prune(bucketOfRoute, () => false);
}

function seconds(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function prune<V>(map: Map<string, V>, expired: (value: V) => boolean): void {
  if (map.size <= MAX_ENTRIES) return;
  for (const [key, value] of map) if (expired(value)) map.delete(key);
  // Insertion order: the oldest entries go first.
  for (const key of map.keys()) {
    if (map.size <= MAX_ENTRIES) break;
    map.delete(key);
  }
}
