/**
 * The shape of a channel (DESIGN "Adding a channel"): a webhook channel supplies these pieces and the
 * generic handler (workers/webhooks.ts) owns their order: cap the body (413) → read the raw bytes
 * once → verify (401/403, nothing stored) → parse (handshake answer, or 400 when malformed) →
 * durable accept of every envelope, in parallel → ack. Channels never see the Hono app.
 *
 * Channel modules must load in Node too (the `npm run dev` banner and `config:check` read their
 * routes and schemas): no `cloudflare:` imports. A channel's config.ts holds its block's schema and
 * loads no send code: the gateway's config (gateway-config.ts) is composed from those alone.
 */
import type * as z from "zod";
import type { InboundEnvelope } from "../core/envelope.ts";
import type { ChannelAdapter } from "./adapter.ts";
import type { ChannelAdminRoutes } from "./channel-admin.ts";
import type { AccountRequirements } from "./credentials.ts";

/** One webhook path a channel serves, resolved from config: which account it belongs to. */
export interface WebhookRoute<Account = unknown> {
  path: string;
  accountId: string;
  /** For people: "LINE", "LINE (account biz)". */
  label: string;
  /** The channel's merged settings for this account (whatever the channel's config helpers return). */
  account: Account;
}

/** What the generic handler hands a channel: the raw bytes, read once and capped. */
export interface WebhookRequest {
  method: string;
  /** The URL as the Worker received it (Twilio: the channel may substitute its configured public URL). */
  url: string;
  /** The path that matched the route. */
  path: string;
  headers: Headers;
  raw: Uint8Array;
  /** Unix ms the request arrived (timestamp windows, envelope.receivedAt). */
  receivedAt: number;
}

/** `status` 503 = a transient failure on our side (keys unreachable): the platform should retry. */
export type VerifyResult =
  | { ok: true }
  | { ok: false; status?: 401 | 403 | 404 | 503; reason: string };

export type ParseResult =
  /** Zero or more events to store; an empty list is a valid "nothing for us" (acked 200). */
  | {
      kind: "envelopes";
      envelopes: InboundEnvelope[] /** why some were dropped, for logs/headers */;
      dropped?: string[] /** opaque to the pipeline, given back to ack */;
      ackHint?: string;
    }
  /** A handshake or probe the platform expects an exact answer to (Slack url_verification, Telegram none). */
  | { kind: "respond"; response: Response }
  | { kind: "malformed"; reason: string };

/** What happened to the envelopes of one request (same order as parse returned them). */
export interface AcceptResult {
  /** true only when every envelope is stored (accepted or duplicate) or unrouted by config. */
  allStored: boolean;
  outcomes: Array<
    | { status: "accepted" | "duplicate"; sessionKey: string }
    | { status: "unrouted"; reason: string }
    | { status: "failed"; error: string }
  >;
  ackHint?: string;
  /** parse's `dropped` reasons, passed through. */
  dropped?: string[];
}

/** The inbound half of a webhook channel. Pure pieces; the generic handler (workers/webhooks.ts) owns the order. */
export interface WebhookPieces<Account = unknown, Config = unknown> {
  /**
   * Paths from the channel's parsed block (only enabled accounts served over webhooks); not called
   * when the config has no block. Two accounts on one path: the second is refused with a log line.
   */
  routes(root: Config): WebhookRoute<Account>[];
  /** Bytes read before verification; larger → 413, nothing stored. */
  maxBodyBytes(route: WebhookRoute<Account>): number;
  /** HTTP methods served on the path (default ["POST"]). */
  methods?: string[];
  /** Signature / token / JWT check. No secret configured → { ok:false, reason:"no-secret" } (and a log line), never open. */
  verify(
    request: WebhookRequest,
    route: WebhookRoute<Account>,
    env: Record<string, unknown>,
  ): Promise<VerifyResult>;
  /** Turns the verified body into envelopes (or a handshake answer). Never calls the platform. */
  parse(
    request: WebhookRequest,
    route: WebhookRoute<Account>,
    env: Record<string, unknown>,
  ): ParseResult | Promise<ParseResult>;
  /** The platform's ack. Default (webhook-ack.ts `defaultWebhookAck`): 200 empty when allStored, 500 otherwise (the platform retries; dedup makes it safe). */
  ack?(result: AcceptResult, route: WebhookRoute<Account>): Response;
}

/**
 * One account a companion connector runs (socket-only transports: Discord Gateway, Slack Socket
 * Mode, Telegram long polling, Mattermost WebSocket). The companion learns these from the Worker
 * (`GET /internal/companion/accounts`), so config stays in one place; secrets never travel: the
 * companion reads each named env var from its own environment (Cloudflare Container envVars, or the
 * Docker host's `-e`).
 */
export interface SocketAccount<Account = unknown> {
  accountId: string;
  /** For people: "Discord", "Discord (account work)". */
  label: string;
  /** The channel's merged settings for this account (the Worker-side view; never sent to the companion). */
  account: Account;
  /** What the companion's connector needs: non-secret JSON settings, and secret name → env var id. */
  connector: { settings: Record<string, unknown>; secretEnv: Record<string, string> };
}

/** One raw platform event as the companion forwarded it (the platform's own JSON, unchanged). */
export interface SocketEvent {
  /** The platform's id for this event (Discord message id + kind, Slack envelope/event id, Telegram update_id, Mattermost post id + event). */
  eventId: string;
  payload: unknown;
  /** Unix ms the companion received it. */
  receivedAt: number;
}

/**
 * The half of a channel a companion connector feeds. The Worker parses the platform's raw event —
 * the same parser (and so the same dedup keys) as the channel's webhook mode where it has one — so
 * the companion holds no config logic, and a leaked companion key cannot forge routing fields.
 */
export interface SocketPieces<Account = unknown, Config = unknown> {
  /**
   * Accounts served over the companion (enabled, socket mode), from the channel's parsed block; not
   * called when the config has no block. An account is either webhook or socket, never both.
   */
  accounts(root: Config, env: Record<string, unknown>): SocketAccount<Account>[];
  /**
   * Replies (typing, receipts) leave as signed `POST /v1/outbound` commands to the companion that
   * holds the session (signal-cli, Baileys) instead of the platform's REST API: the Worker then
   * needs `companion.url` and an outbound key, which `npm run dev` sets up for its own companion.
   */
  repliesThroughCompanion?: boolean;
  /** Raw event → envelopes, like WebhookPieces.parse (mention gating, access metadata, dedup keys). Never calls the platform. */
  parse(
    event: SocketEvent,
    account: SocketAccount<Account>,
    env: Record<string, unknown>,
  ): ParseResult | Promise<ParseResult>;
}

/** How a user turns the channel on (docs/channels/<id>.md, `npx edgeclaw channels <id> setup`). */
export interface ChannelSetup {
  title: string;
  /** Markdown: what to create in the developer portal, secrets (`wrangler secret put …`), the URL to paste, the `simulate` line. */
  steps: string;
}

/** Everything one channel brings: its index.ts's default export. `functions/channels/manifests.ts` lists them; adding a channel = its folder + one line there. */
/**
 * `Config` is the parsed `channels.<id>` block, `Account` one account's settings in force, and
 * `RouteAccount` what a webhook route carries (the account, or the account with what the path adds:
 * Twilio's public URL, Mattermost's endpoint kind).
 */
export interface ChannelDefinition<Config = unknown, Account = unknown, RouteAccount = Account> {
  id: string;
  /**
   * zod schema of `channels.<id>` with OpenClaw's key names and defaults, from the channel's
   * config.ts: the same one gateway-config.ts composes the gateway's config from.
   */
  configSchema: z.ZodType<Config>;
  /**
   * The settings in force for one account, from the parsed block: the root's keys with the
   * account's own over them (accounts.ts `mergedAccount`, by the channel's merge rules), or
   * undefined for an account the channel will not answer for (SMS: one the block does not list).
   * The pipeline calls it once per call and hands the result to the piece (SendContext.account).
   */
  account(root: Config, accountId: string): Account | undefined;
  webhook?: WebhookPieces<RouteAccount, Config>;
  /** Served by a companion connector (socket-only transports); see SocketPieces. */
  socket?: SocketPieces<Account, Config>;
  outbound: ChannelAdapter<Account>;
  setup?: ChannelSetup;
  /**
   * The channel's own operator routes (channel-admin.ts), mounted by the admin API at
   * `/admin/channels/<id>` behind the gateway token: Mattermost registers its slash commands there.
   */
  admin?: ChannelAdminRoutes;
  /**
   * Each enabled account's credentials — its secrets with their env fallbacks, and any account the
   * Worker will not serve (credentials.ts). Config check, the dev banner, the control page and
   * deploy's secret list name what is missing from this one list (credential-check.ts).
   */
  requirements(root: Config): AccountRequirements[];
  /**
   * OpenClaw's group sender fallback (channels/groups): with no `groupAllowFrom`, `allowFrom` — the
   * DM allowlist — also admits senders in groups. Only where the channel's docs say so (Telegram,
   * Teams, WhatsApp, Signal, iMessage, Zalo). Elsewhere (Slack, LINE, …) a group is admitted by the
   * group allowlist alone, so opening DMs (`dmPolicy: "open"`, `allowFrom: ["*"]`) never opens groups.
   */
  groupSendersFallBackToAllowFrom?: boolean;
  /**
   * The key under `channels.<id>` that lists the groups a message may come from, named when a group
   * is refused for not being listed: "groups" unless the channel calls it otherwise (Slack
   * `channels`, Discord `guilds`).
   */
  groupAllowlistKey?: string;
}
