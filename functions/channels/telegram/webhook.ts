import type { AcceptResult, WebhookPieces, WebhookRoute } from "../channel.ts";
import { logClash, webhookRoutes } from "../accounts.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import {
  botIdFromToken,
  telegramSecrets,
  telegramWebhookAccounts,
  type TelegramAccount,
  type TelegramChannelConfig,
} from "./config.ts";
import { parseTelegramUpdate } from "./parse.ts";
import { verifyTelegramSecret } from "./verify.ts";

/**
 * The inbound half: one POST path per account (`webhookPath`, default /telegram-webhook). The
 * generic handler caps and reads the body, then calls these in order; nothing here calls Telegram.
 * Telegram repeats an update until it gets a 2xx, so the ack is 200 only once the update is stored
 * (dedup by update_id makes the repeat harmless) and 500 otherwise.
 */

/** Updates are small (a message holds at most 4096 characters); 1 MiB bounds what is read before the secret check. */
export const TELEGRAM_MAX_BODY_BYTES = 1024 * 1024;

export const telegramWebhook: WebhookPieces<TelegramAccount, TelegramChannelConfig> = {
  routes(telegram: TelegramChannelConfig): WebhookRoute<TelegramAccount>[] {
    return webhookRoutes(
      "Telegram",
      telegramWebhookAccounts(telegram, logClash("telegram", "webhookPath")),
    );
  },
  maxBodyBytes: () => TELEGRAM_MAX_BODY_BYTES,
  async verify(request, route, env) {
    const { webhookSecret } = telegramSecrets(route.account, env);
    const verified = await verifyTelegramSecret(request.headers, webhookSecret);
    return verified.ok ? verified : { ok: false, status: 401, reason: verified.reason };
  },
  parse(request, route, env) {
    const botId = botIdFromToken(telegramSecrets(route.account, env).botToken);
    return parseTelegramUpdate(request.raw, {
      account: route.account,
      botId,
      receivedAt: request.receivedAt,
    });
  },
  ack: telegramAck,
};

/**
 * 200 once stored. A button click is answered in the response body itself (a Bot API call made
 * through the webhook reply, https://core.telegram.org/bots/api#making-requests-when-getting-updates),
 * so the user's button stops spinning with no outbound call on the ack path.
 */
export function telegramAck(result: AcceptResult): Response {
  const ack = defaultWebhookAck(result);
  if (!result.allStored || !result.ackHint) return ack;
  return Response.json(
    { method: "answerCallbackQuery", callback_query_id: result.ackHint },
    { headers: ack.headers },
  );
}
