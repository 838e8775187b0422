import type {
  SessionSettings,
  SessionSettingsPatch,
} from "../../functions/commands/session-control.ts";
import { queuePolicy } from "./inbox/queue-policy.ts";
import type { SessionState } from "./state.ts";

/** The user's session settings (/model, /queue, /think, …), kept in meta `settings` across resets. */

export function settings(s: SessionState): SessionSettings {
  return s.store.meta.getJson("settings") ?? {};
}

/** Applies a patch: `null` clears an override, undefined leaves it alone. */
export function updateSettings(s: SessionState, patch: SessionSettingsPatch): SessionSettings {
  const next: Record<string, unknown> = { ...settings(s) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  s.store.meta.setJson("settings", next);
  return next as SessionSettings;
}

export function queueModeFor(s: SessionState, channel: string): string {
  return queuePolicy(s.config, settings(s), channel).mode;
}
