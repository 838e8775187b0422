import * as z from "zod";
import type {
  ConnectorFactory,
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorStatus,
} from "../../../../companion/src/connector.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  sleep,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";

/**
 * Telegram long polling for one bot (`channels.telegram.mode: "polling"`): getUpdates with the
 * offset kept in the Worker's companion state, advanced only after submit() resolved — after the
 * Worker stored every update of the batch — so a crash anywhere replays updates (deduplicated by
 * update_id) and never skips one. Never both modes for one bot: while getWebhookInfo shows a
 * webhook the connector does not poll (it says so in its status and checks again with backoff);
 * it never deletes a webhook someone set on purpose. A 409 Conflict (another poller on this token,
 * or a webhook set meanwhile) backs off and re-checks; a 401 is fatal (the token is wrong).
 */
const settingsSchema = z.object({
  apiRoot: z.url().default("https://api.telegram.org"),
  pollTimeoutSeconds: z.number().int().min(0).max(50).default(30),
});

const botAnswerSchema = z.object({
  ok: z.boolean(),
  result: z.unknown().optional(),
  error_code: z.number().optional(),
  description: z.string().optional(),
  parameters: z.object({ retry_after: z.number().optional() }).loose().optional(),
});

const updatesSchema = z.array(z.object({ update_id: z.number().int().nonnegative() }).loose());

const OFFSET_KEY = "offset";

class BotApiError extends Error {
  constructor(
    readonly method: string,
    readonly status: number,
    readonly description: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${method}: ${status} ${description}`);
  }
}

export interface TelegramConnectorOptions {
  backoff?: { initialMs: number; maxMs: number; stableMs: number };
}

export function telegramConnector(
  account: ConnectorAccount,
  options: TelegramConnectorOptions = {},
): Connector {
  const settings = settingsSchema.parse(account.settings);
  let loop: Promise<void> | undefined;
  let status: ConnectorStatus = { state: "starting" };
  const controller = new AbortController();

  function report(ctx: ConnectorContext, next: ConnectorStatus) {
    status = { ...status, ...next };
    ctx.setStatus(status);
  }

  async function call(
    token: string,
    method: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<unknown> {
    const url = `${settings.apiRoot.replace(/\/+$/, "")}/bot${token}/${method}`;
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    const parsed = botAnswerSchema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new BotApiError(method, response.status, "not a Bot API answer");
    if (!parsed.data.ok)
      throw new BotApiError(
        method,
        parsed.data.error_code ?? response.status,
        parsed.data.description ?? "error",
        parsed.data.parameters?.retry_after,
      );
    return parsed.data.result;
  }

  async function run(ctx: ConnectorContext, signal: AbortSignal): Promise<void> {
    const token = ctx.secret("botToken");
    if (!token)
      return report(ctx, {
        state: "fatal",
        lastError: `bot token not set (env ${account.secretEnv.botToken ?? "botToken"})`,
      });
    const backoff = new ReconnectBackoff(options.backoff ?? DEFAULT_BACKOFF);
    const pollMs = settings.pollTimeoutSeconds * 1000;
    while (!signal.aborted) {
      try {
        report(ctx, { state: "connecting" });
        const webhook = (await call(token, "getWebhookInfo", {}, signal, 30_000)) as
          | { url?: string }
          | undefined;
        if (webhook?.url) {
          // Never both modes for one bot: a webhook set here means someone wants webhook delivery.
          throw new Error(
            `a webhook is set for this bot (${new URL(webhook.url).host}); polling refused. Remove it (deleteWebhook) or set channels.telegram mode "webhook"`,
          );
        }
        const stored = await ctx.state.get(OFFSET_KEY);
        let offset = stored !== undefined ? Number(stored) : undefined;
        let first = true;
        while (!signal.aborted) {
          const result = await call(
            token,
            "getUpdates",
            { ...(offset !== undefined ? { offset } : {}), timeout: settings.pollTimeoutSeconds },
            signal,
            pollMs + 15_000,
          );
          if (first) {
            first = false;
            backoff.connected();
            report(ctx, { state: "ready", lastError: undefined });
          }
          const updates = updatesSchema.parse(result);
          if (!updates.length) continue;
          await ctx.submit(
            updates.map((update) => ({ eventId: String(update.update_id), payload: update })),
          );
          // Only now, with every update stored by the Worker, does the offset move (Telegram forgets
          // updates below the offset at the next call).
          offset = Math.max(...updates.map((update) => update.update_id)) + 1;
          await ctx.state.put(OFFSET_KEY, String(offset));
          report(ctx, { state: "ready", lastEventAt: Date.now() });
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof BotApiError && error.status === 401)
          return report(ctx, {
            state: "fatal",
            lastError: `${error.method}: 401 Unauthorized (the bot token was rejected)`,
          });
        const message =
          error instanceof BotApiError && error.status === 409
            ? `${error.message} (another poller uses this token, or a webhook is set)`
            : error instanceof Error
              ? error.message
              : String(error);
        const retryAfterMs =
          error instanceof BotApiError && error.retryAfterSeconds
            ? error.retryAfterSeconds * 1000
            : 0;
        const wait = Math.max(retryAfterMs, backoff.nextDelayMs());
        report(ctx, { state: "backoff", lastError: message });
        ctx.log("warn", "telegram polling interrupted", { error: message, waitMs: wait });
        await sleep(wait, signal);
      }
    }
  }

  return {
    channel: "telegram",
    accountId: account.accountId,
    async start(ctx) {
      const signal = AbortSignal.any([ctx.signal, controller.signal]);
      loop = run(ctx, signal).catch((error: unknown) =>
        report(ctx, {
          state: "fatal",
          lastError: error instanceof Error ? error.message : String(error),
        }),
      );
    },
    async stop() {
      controller.abort();
      await loop;
      status = { ...status, state: "stopped" };
    },
  };
}

/** What the companion runs for an account of this channel (companion/src/connectors/index.ts finds it here). */
export const connector: ConnectorFactory = (account) => telegramConnector(account);
