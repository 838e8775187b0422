/**
 * Id normalisation shared by session keys, bindings and allowlists. Agent and account ids follow
 * OpenClaw's rule: `^[a-z0-9][a-z0-9_-]{0,63}$` case-insensitive, stored lower-case; anything else
 * has its invalid runs collapsed to `-` (empty → the default).
 */
export const DEFAULT_AGENT_ID = "main";
export const DEFAULT_ACCOUNT_ID = "default";
export const MAIN_KEY = "main";

const VALID_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

function normalizeId(value: string | undefined, fallback: string): string {
  const trimmed = (value ?? "").trim();
  if (!trimmed) return fallback;
  if (VALID_ID.test(trimmed)) return trimmed.toLowerCase();
  const collapsed = trimmed
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return collapsed || fallback;
}

export function normalizeAgentId(value: string | undefined): string {
  return normalizeId(value, DEFAULT_AGENT_ID);
}

export function normalizeAccountId(value: string | undefined): string {
  return normalizeId(value, DEFAULT_ACCOUNT_ID);
}

/** Channel ids and peer ids inside session keys are trimmed and lower-cased. */
export function normalizeToken(value: string | undefined): string {
  return (value ?? "").trim().toLowerCase();
}
