/**
 * Masks what must never reach a log line: secrets (every configured one, plus anything shaped like
 * a token, key or credential) and — unless `logging.redactSensitive` is "off" — message text.
 * OpenClaw's mask: a value of 18 characters or more keeps its first 6 and last 4, shorter ones
 * become "***". Secret masking is always on, whatever the setting (as in OpenClaw).
 */

const BUILT_IN_PATTERNS: RegExp[] = [
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bxox[abpore]-[A-Za-z0-9-]{6,}/g,
  /\bxapp-[A-Za-z0-9-]{6,}/g,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{12,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  // key = value / "key": "value" for credential-looking names
  /\b(?:api[_-]?key|apikey|token|secret|password|passwd|authorization|signing[_-]?secret|client[_-]?secret)\b["']?\s*[:=]\s*["']?[^\s"',;}&]{4,}/gi,
  // credentials inside URLs: scheme://user:password@host
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/gi,
  // payment fields
  /\b(?:card[_-]?number|cvc|cvv)\b["']?\s*[:=]\s*["']?[^\s"',;}]{3,}/gi,
];

/** Field names whose values are message text (prompts, replies, previews, bodies). */
export const MESSAGE_TEXT_KEYS = new Set([
  "text",
  "content",
  "prompt",
  "reply",
  "body",
  "preview",
  "message_text",
  "messages",
  "input",
  "output",
]);

export function mask(value: string): string {
  return value.length >= 18 ? `${value.slice(0, 6)}…${value.slice(-4)}` : "***";
}

export interface RedactorOptions {
  /** Exact values to mask wherever they appear (configured secrets). Values under 6 characters are ignored (they would mask ordinary words). */
  secrets: Iterable<string>;
  /** `logging.redactPatterns` (regex source, or /pattern/flags). */
  extraPatterns: string[];
  /** "tools": message text is masked too; "off": only secrets. */
  redactSensitive: "tools" | "off";
}

export class Redactor {
  private readonly secrets: string[];
  private readonly patterns: RegExp[];
  readonly maskText: boolean;

  constructor(options: RedactorOptions) {
    // Longest first, so a secret that contains another is masked whole.
    this.secrets = [...new Set([...options.secrets].filter((s) => s.length >= 6))].sort(
      (a, b) => b.length - a.length,
    );
    this.patterns = [...BUILT_IN_PATTERNS, ...options.extraPatterns.flatMap(compilePattern)];
    this.maskText = options.redactSensitive !== "off";
  }

  /** Masks secrets (always) and the given message texts (when maskText) inside a string. */
  string(value: string, texts: readonly string[] = []): string {
    let out = value;
    for (const secret of this.secrets)
      if (out.includes(secret)) out = out.split(secret).join(mask(secret));
    for (const pattern of this.patterns) out = out.replace(pattern, (match) => mask(match));
    if (this.maskText) {
      for (const text of texts)
        if (text.length >= 8 && out.includes(text))
          out = out.split(text).join(`[message text, ${text.length} chars]`);
    }
    return out;
  }

  /** A log record's fields: strings masked, message-text fields replaced, errors reduced to name and first line. */
  value(value: unknown, texts: readonly string[], key?: string, depth = 0): unknown {
    if (typeof value === "string") {
      if (this.maskText && key !== undefined && MESSAGE_TEXT_KEYS.has(key))
        return `[message text, ${value.length} chars]`;
      return this.string(value.length > 2000 ? `${value.slice(0, 2000)}…` : value, texts);
    }
    if (value instanceof Error) {
      const cause = value.cause instanceof Error ? ` ← ${value.cause.message.split("\n")[0]}` : "";
      return {
        name: value.name,
        message: this.string(
          `${value.message.split("\n")[0]!.slice(0, 500)}${cause.slice(0, 300)}`,
          texts,
        ),
      };
    }
    if (value === null || typeof value !== "object") return value;
    if (depth >= 4) return "[object]";
    if (Array.isArray(value))
      return value.slice(0, 50).map((item) => this.value(item, texts, key, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = this.value(v, texts, k, depth + 1);
    return out;
  }
}

function compilePattern(source: string): RegExp[] {
  try {
    const slashed = /^\/(.+)\/([a-z]*)$/.exec(source);
    if (slashed)
      return [new RegExp(slashed[1]!, slashed[2]!.includes("g") ? slashed[2] : `${slashed[2]}g`)];
    return [new RegExp(source, "gi")];
  } catch {
    return [];
  }
}
