import { expect } from "vitest";

/**
 * Reads a composed user turn the way an attacker's test must: the turn's own fence id (the first
 * start marker), the gateway's text outside every fence of that id, and the text inside them.
 * Fails the test when a fence of that id is left open.
 */
export function splitByFence(content: string): { id: string; outside: string; inside: string[] } {
  const id = /<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]{16})">>>/.exec(content)?.[1];
  expect(id, "the turn has fences").toBeDefined();
  const start = `<<<EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`;
  const end = `<<<END_EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`;
  let outside = "";
  const inside: string[] = [];
  let at = 0;
  for (;;) {
    const open = content.indexOf(start, at);
    if (open < 0) return { id: id!, outside: outside + content.slice(at), inside };
    const close = content.indexOf(end, open);
    expect(close, "every fence is closed").toBeGreaterThan(open);
    outside += content.slice(at, open);
    inside.push(content.slice(open + start.length, close));
    at = close + end.length;
  }
}

/** The text of a model request's last message (string or content blocks). */
export function lastMessageText(messages: Array<{ role: string; content: unknown }>): string {
  const turn = messages.at(-1)!;
  return typeof turn.content === "string"
    ? turn.content
    : (turn.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("\n");
}
