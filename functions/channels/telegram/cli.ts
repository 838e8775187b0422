import { callBotApi, type BotApiResult } from "./client.ts";
import { generateTelegramSecretToken, TELEGRAM_SECRET_TOKEN_PATTERN } from "./verify.ts";
import type { CommandSpec } from "../../../scripts/cli/command-spec.ts";
import { CliError, UsageError } from "../../../scripts/cli/http.ts";

/**
 * `edgeclaw channels telegram set-webhook | delete-webhook | info`: the Bot API calls that connect a
 * bot to a deployed Worker. They talk to Telegram directly with the bot token (--bot-token, else
 * TELEGRAM_BOT_TOKEN), never to the gateway, and never print the token. `--api-root` (else
 * TELEGRAM_API_ROOT) points them at a self-hosted Bot API server or the local simulator.
 */

/** The updates the Worker handles; anything else would be acknowledged and dropped anyway. */
export const TELEGRAM_ALLOWED_UPDATES = ["message", "edited_message", "callback_query"];

const botOptions = { "bot-token": "token", "api-root": "url", account: "id" };

function botFrom(options: Record<string, string | boolean | undefined>): {
  apiRoot: string;
  botToken: string;
} {
  const botToken = str(options["bot-token"]) ?? process.env.TELEGRAM_BOT_TOKEN;
  if (!botToken)
    throw new CliError(
      "no bot token: pass --bot-token or set TELEGRAM_BOT_TOKEN (the token @BotFather gave you)",
    );
  const apiRoot =
    str(options["api-root"]) ?? process.env.TELEGRAM_API_ROOT ?? "https://api.telegram.org";
  if (/\/bot[^/]*\/?$/.test(apiRoot))
    throw new CliError(
      "--api-root is the Bot API root (e.g. https://api.telegram.org), without /bot…",
    );
  return { apiRoot, botToken };
}

async function call<T>(
  bot: { apiRoot: string; botToken: string },
  method: string,
  params: Record<string, unknown> = {},
): Promise<T> {
  const result: BotApiResult<T> = await callBotApi<T>(bot.apiRoot, bot.botToken, method, params);
  if (result.ok) return result.result;
  if (result.kind === "lost")
    throw new CliError(
      `cannot reach the Bot API at ${bot.apiRoot}: ${result.error.replace(bot.botToken, "<token>")}`,
    );
  if (result.errorCode === 401)
    throw new CliError(
      "Telegram refused the bot token (401 Unauthorized): copy it again from @BotFather",
    );
  throw new CliError(`Telegram refused ${method}: ${result.errorCode} ${result.description}`);
}

/** The Worker secret that holds an account's webhook secret (the default account's has an env fallback). */
function secretName(account: string | undefined): string {
  return !account || account === "default"
    ? "TELEGRAM_WEBHOOK_SECRET"
    : `TELEGRAM_WEBHOOK_SECRET_${account.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}`;
}

interface WebhookInfo {
  url: string;
  pending_update_count: number;
  last_error_date?: number;
  last_error_message?: string;
  max_connections?: number;
  allowed_updates?: string[];
}

/** This channel's `edgeclaw` commands (scripts/cli/commands.ts finds them here). */
export const commands: CommandSpec[] = [
  {
    name: "channels telegram set-webhook",
    args: [],
    options: { ...botOptions, secret: "token" },
    summary:
      "register the Worker's public URL (--url) with a new secret token; prints the wrangler secret to store",
    async run({ options, print }) {
      const url = str(options.url);
      if (!url || !/^https:\/\/[^/\s]+/.test(url))
        throw new UsageError(
          "--url must be the public https:// URL of the Worker's Telegram path (e.g. https://edgeclaw.example.workers.dev/telegram-webhook)",
        );
      const secret = str(options.secret) ?? generateTelegramSecretToken();
      if (!TELEGRAM_SECRET_TOKEN_PATTERN.test(secret))
        throw new UsageError("--secret must be 1-256 characters of A-Z, a-z, 0-9, _ and -");
      const bot = botFrom(options);
      await call(bot, "setWebhook", {
        url,
        secret_token: secret,
        allowed_updates: TELEGRAM_ALLOWED_UPDATES,
      });
      const name = secretName(str(options.account));
      const account = str(options.account);
      print(
        {
          ok: true,
          url,
          allowedUpdates: TELEGRAM_ALLOWED_UPDATES,
          secretName: name,
          secretToken: secret,
        },
        () =>
          [
            `Webhook set: ${url}`,
            `  updates: ${TELEGRAM_ALLOWED_UPDATES.join(", ")}`,
            "",
            "Telegram now sends this secret token with every update. Store it where the Worker reads it:",
            `  echo '${secret}' | npx wrangler secret put ${name}`,
            ...(account && account !== "default"
              ? [
                  "and name it in edgeclaw.json5:",
                  `  channels: { telegram: { accounts: { ${account}: { webhookSecret: { source: "env", id: "${name}" } } } } }`,
                ]
              : []),
            "Until then the Worker answers 401 and Telegram keeps the updates queued (it retries).",
          ].join("\n"),
      );
      return 0;
    },
  },
  {
    name: "channels telegram delete-webhook",
    args: [],
    options: botOptions,
    summary: "remove the bot's webhook (Telegram stops calling the Worker)",
    async run({ options, print }) {
      await call(botFrom(options), "deleteWebhook", {});
      print({ ok: true }, () => "Webhook removed.");
      return 0;
    },
  },
  {
    name: "channels telegram info",
    args: [],
    options: botOptions,
    summary: "the bot's identity and its webhook as Telegram sees it (getMe, getWebhookInfo)",
    async run({ options, print }) {
      const bot = botFrom(options);
      const me = await call<{ id: number; username?: string }>(bot, "getMe");
      const info = await call<WebhookInfo>(bot, "getWebhookInfo");
      print({ bot: me, webhook: info }, () =>
        [
          `bot:        @${me.username ?? "?"} (id ${me.id})   → channels.telegram.botUsername: "${me.username ?? ""}"`,
          `webhook:    ${info.url || "(none: run set-webhook)"}`,
          `pending:    ${info.pending_update_count} update(s)`,
          ...(info.allowed_updates ? [`updates:    ${info.allowed_updates.join(", ")}`] : []),
          ...(info.last_error_message
            ? [
                `last error: ${info.last_error_message}${info.last_error_date ? ` (${new Date(info.last_error_date * 1000).toISOString()})` : ""}`,
              ]
            : []),
        ].join("\n"),
      );
      return 0;
    },
  },
];

function str(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}
