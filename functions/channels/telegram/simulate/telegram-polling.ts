import type { Reply } from "./telegram-records.ts";
import type { TelegramFakeState } from "./telegram-state.ts";

/**
 * getUpdates as Telegram's: updates below `offset` are confirmed and forgotten; with none waiting
 * the call holds up to `timeout` seconds (at most 50); a webhook set → 409; a second concurrent
 * call for the same bot ends the first with 409.
 */
export async function getUpdates(
  state: TelegramFakeState,
  botId: string,
  args: Record<string, unknown>,
): Promise<Reply> {
  const conflict = (description: string): Reply => [
    409,
    { ok: false, error_code: 409, description: `Conflict: ${description}` },
  ];
  if (state.webhooks.has(botId))
    return conflict(
      "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    );
  const queue = state.pollQueue(botId);
  // Telegram answers the older of two concurrent calls with a conflict.
  queue.waiting?.(true);
  queue.waiting = undefined;
  const offset = args.offset !== undefined ? Number(args.offset) : undefined;
  if (offset !== undefined && offset > queue.confirmedOffset) {
    queue.confirmedOffset = offset;
    queue.pending = queue.pending.filter((update) => update.update_id >= offset);
  }
  const limit = Math.min(100, Math.max(1, Number(args.limit ?? 100)));
  const ready = () => queue.pending.slice(0, limit);
  if (!ready().length) {
    const timeoutMs = Math.min(50, Math.max(0, Number(args.timeout ?? 0))) * 1000;
    const conflicted = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      function finish(value: boolean) {
        clearTimeout(timer);
        if (queue.waiting === finish) queue.waiting = undefined;
        resolve(value);
      }
      queue.waiting = finish;
    });
    if (conflicted)
      return conflict(
        "terminated by other getUpdates request; make sure that only one bot instance is running",
      );
  }
  return [200, { ok: true, result: ready() }];
}
