import { messageMethod } from "./telegram-messages.ts";
import type { Reply } from "./telegram-records.ts";
import type { TelegramFakeState } from "./telegram-state.ts";

/**
 * The Bot API methods the fake Telegram answers once the token and any scripted failure have been
 * checked: getMe, chat actions, callback answers and reactions, getFile and the webhook methods;
 * the message methods are telegram-messages.ts'. Unknown methods → 404 "method not found".
 */
export function applyMethod(
  state: TelegramFakeState,
  method: string,
  args: Record<string, unknown>,
  token: string,
): Reply {
  const botId = token.split(":")[0]!;
  const bad = (description: string): Reply => [
    400,
    { ok: false, error_code: 400, description: `Bad Request: ${description}` },
  ];
  const ok = (result: unknown): Reply => [200, { ok: true, result }];
  const chatId = args.chat_id !== undefined ? String(args.chat_id) : undefined;
  switch (method) {
    case "getMe":
      return ok({
        id: Number(botId),
        is_bot: true,
        first_name: "edgeclaw test",
        username: state.usernames.get(botId) ?? "edgeclaw_test_bot",
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
      });
    case "sendChatAction":
      if (!chatId) return bad("chat_id is empty");
      return ok(true);
    case "answerCallbackQuery":
    case "setMessageReaction":
      return ok(true);
    case "getFile": {
      const file = state.files.get(String(args.file_id));
      if (!file) return bad("invalid file_id");
      return ok({
        file_id: args.file_id,
        file_unique_id: `u${String(args.file_id)}`,
        file_size: file.size,
        file_path: file.filePath,
      });
    }
    case "setWebhook": {
      const url = typeof args.url === "string" ? args.url : "";
      const secret = args.secret_token;
      if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(String(secret)))
        return bad("secret token contains unallowed characters");
      if (url && !url.startsWith("https://"))
        return bad("bad webhook: An HTTPS URL must be provided for webhook");
      if (!url) state.webhooks.delete(botId);
      else
        state.webhooks.set(botId, {
          url,
          secret_token: secret,
          allowed_updates: args.allowed_updates,
          max_connections: args.max_connections ?? 40,
          drop_pending_updates: args.drop_pending_updates,
        });
      return ok(true);
    }
    case "deleteWebhook":
      state.webhooks.delete(botId);
      return ok(true);
    case "getWebhookInfo": {
      const hook = state.webhooks.get(botId);
      return ok({
        url: hook?.url ?? "",
        has_custom_certificate: false,
        pending_update_count: 0,
        ...(hook
          ? { max_connections: hook.max_connections, allowed_updates: hook.allowed_updates }
          : {}),
      });
    }
    default:
      return (
        messageMethod(state, method, args, botId) ?? [
          404,
          { ok: false, error_code: 404, description: "Not Found: method not found" },
        ]
      );
  }
}
