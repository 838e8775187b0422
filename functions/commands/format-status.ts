import { formatDuration } from "./duration.ts";
import type { SessionStatus } from "./session-control.ts";
import { usd } from "./usage.ts";

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1).replace(/\.0$/, "")}k`;
  return String(n);
}

const MODEL_ORIGIN_NOTE: Record<string, string> = {
  demo: " (the scripted demo model: EDGECLAW_FAKE_MODEL=1)",
  "key-default": " (default for the API key; set agents.defaults.model.primary to choose)",
};

/** `🔑 Auth (anthropic): anthropic:work in use · anthropic:default cooling down 25s (rate_limit)`. */
function authLine(auth: NonNullable<SessionStatus["authProfiles"]>, now: number): string {
  const parts = auth.profiles.map((profile) => {
    const left =
      profile.until !== undefined ? ` ${formatDuration(Math.max(0, profile.until - now))}` : "";
    if (profile.state === "cooldown")
      return `${profile.id} cooling down${left} (${profile.reason})`;
    if (profile.state === "disabled") return `${profile.id} disabled${left} (${profile.reason})`;
    if (profile.state === "no_key") return `${profile.id} no key set`;
    return profile.id === auth.current ? `${profile.id} in use` : `${profile.id} ready`;
  });
  if (auth.pinned) parts.push(`pinned: ${auth.pinned} (/model …@profile)`);
  return `🔑 Auth (${auth.provider}): ${parts.join(" · ")}`;
}

/** The /status card: model, tokens, context window, queue mode, session age, compactions. */
export function formatStatus(status: SessionStatus, now: number): string {
  const context =
    status.contextWindow !== undefined
      ? status.contextTokens !== undefined
        ? `${compact(status.contextTokens)}/${compact(status.contextWindow)} (${Math.round((status.contextTokens / status.contextWindow) * 100)}%)`
        : `window ${compact(status.contextWindow)}`
      : "window unknown";
  const queue = status.queue;
  const lines = [
    "🦞 edgeclaw status",
    `🧠 Model: ${status.model}${status.modelOverride ? " (session override)" : (MODEL_ORIGIN_NOTE[status.modelOrigin ?? "none"] ?? "")}`,
    `🧮 Tokens: ${compact(status.inputTokens)} in / ${compact(status.outputTokens)} out · Context: ${context}`,
    `💸 Spend: ${usd(status.spend.usd)} over ${status.spend.calls} model call${status.spend.calls === 1 ? "" : "s"} · platform ~${usd(status.spend.platformUsd)} (estimate) · /usage cost`,
    `🧹 Compactions: ${status.compactions}`,
    `📥 Queue: ${queue.mode} (debounce ${formatDuration(queue.debounceMs)} · cap ${queue.cap} · drop ${queue.drop})${status.runActive ? ` · running, ${status.queuedMessages} queued` : ""}`,
    `⏱️ Session: ${status.sessionKey} · age ${formatDuration(Math.max(0, now - status.sessionStartedAt))}${status.lastInteractionAt !== undefined ? ` · last activity ${formatDuration(Math.max(0, now - status.lastInteractionAt))} ago` : ""}`,
    ...(status.send.allowed
      ? []
      : [
          `🔇 Replies held back (${status.send.source === "session" ? "/send off" : "session.sendPolicy"}) · /send on`,
        ]),
    ...(status.authProfiles ? [authLine(status.authProfiles, now)] : []),
    `💭 Think: ${status.thinkLevel}${status.thinkSource === "session" ? " (session)" : ""} · Reasoning: ${status.reasoningLevel} · Verbose: ${status.verbose}`,
  ];
  return lines.join("\n");
}
