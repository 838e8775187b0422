import type { EdgeclawConfig, QueueDrop, QueueMode } from "../../../functions/config/schema.ts";
import type { SessionSettings } from "../../../functions/commands/session-control.ts";

export interface QueuePolicy {
  mode: QueueMode;
  debounceMs: number;
  cap: number;
  drop: QueueDrop;
}

/**
 * The queue behaviour in force for a channel, in OpenClaw's precedence: the session's /queue
 * settings → `messages.queue.byChannel` / `debounceMsByChannel` → `messages.queue` defaults.
 */
export function queuePolicy(
  config: EdgeclawConfig,
  settings: SessionSettings,
  channel: string,
): QueuePolicy {
  const queue = config.messages.queue;
  const session = settings.queue ?? {};
  return {
    mode: session.mode ?? queue.byChannel[channel] ?? queue.mode,
    debounceMs: session.debounceMs ?? queue.debounceMsByChannel[channel] ?? queue.debounceMs,
    cap: session.cap ?? queue.cap,
    drop: session.drop ?? queue.drop,
  };
}
