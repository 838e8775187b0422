/**
 * Which channel ids a source file names in its code: what the channel-folder shape test measures.
 * Comments and prose (a string with a space in it: a help text, an error message) do not count —
 * naming Slack as an example needs no edit when a channel is added. What counts: an identifier
 * (`slackChannel`, `FAKE_SLACK_URL`), an import path or a string with no space (`"slack"`,
 * `/line/webhook`, `../../functions/channels/discord/api.ts`), split into words at case changes and
 * punctuation, one of which is the id (or, for an id made of two words, the two in a row). A
 * channel's platform name counts too (Twilio for sms, Lark for feishu). An id that is an everyday
 * word (`line`, `signal`) is matched in strings and UPPER_SNAKE names only: `line` and `lines` as
 * variables are text lines, not LINE, and `signal` an AbortSignal, not Signal; and a few names hold
 * the word in its everyday sense (NOT_A_CHANNEL).
 */
import ts from "typescript";

const PLATFORM_NAMES: Record<string, string[]> = {
  googlechat: ["google chat"],
  msteams: ["ms teams"],
  sms: ["twilio"],
  feishu: ["lark"],
};
const EVERYDAY_WORDS = new Set(["line", "signal"]);
/**
 * Names that hold a channel's word in its everyday sense: `KILL_SLACK_MS` is time slack,
 * `REPEATED_SIGNAL_MS` a process signal's, and the memory index's `index-signal.ts` is no Signal.
 */
const NOT_A_CHANNEL = [/^[A-Z_]+_SLACK_MS$/, /^[A-Z_]+_SIGNAL_MS$/, /(^|\/)index-signal(\.ts)?$/];

function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

interface Token {
  text: string;
  kind: "identifier" | "string";
}

function codeTokens(path: string, source: string): Token[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false);
  const tokens: Token[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node))
      tokens.push({ text: node.text, kind: "identifier" });
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      const text = (node as ts.LiteralLikeNode).text;
      if (!/\s/.test(text)) tokens.push({ text, kind: "string" });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return tokens;
}

function tokenNames(token: Token, id: string): boolean {
  if (NOT_A_CHANNEL.some((pattern) => pattern.test(token.text))) return false;
  if (EVERYDAY_WORDS.has(id) && token.kind === "identifier" && !/^[A-Z0-9_]+$/.test(token.text))
    return false;
  const joined = ` ${words(token.text).join(" ")} `;
  return [id, ...(PLATFORM_NAMES[id] ?? [])].some((name) => joined.includes(` ${name} `));
}

/** The ids among `ids` that `source` names in code, each with the first token that does. */
export function channelsNamed(path: string, source: string, ids: string[]): Map<string, string> {
  const named = new Map<string, string>();
  for (const token of codeTokens(path, source))
    for (const id of ids) if (!named.has(id) && tokenNames(token, id)) named.set(id, token.text);
  return named;
}
