import type { HookMapping } from "../config/automation-schema.ts";

/**
 * `hooks.presets`: mappings OpenClaw ships by name. "gmail" takes Gmail notifications shaped as
 * OpenClaw's Gmail watcher posts them (`{ messages: [{ id, from, subject, snippet, body? }] }`) on
 * `/hooks/gmail` and starts an agent turn with the sender, subject and snippet. It keeps no session
 * key (a fresh session per call): a per-message key needs hooks.allowRequestSessionKey, which a
 * user's own mapping can opt into. The mail text reaches the prompt as untrusted hook content.
 */
const PRESETS: Record<"gmail", HookMapping> = {
  gmail: {
    match: { path: "gmail" },
    action: "agent",
    name: "Gmail",
    wakeMode: "now",
    messageTemplate:
      "New email from {{messages[0].from}}\nSubject: {{messages[0].subject}}\n{{messages[0].snippet}}",
  },
};

/** The user's mappings first (they win on a shared path), then the enabled presets. */
export function effectiveHookMappings(
  mappings: readonly HookMapping[],
  presets: readonly (keyof typeof PRESETS)[],
): HookMapping[] {
  return [...mappings, ...presets.map((name) => PRESETS[name])];
}
