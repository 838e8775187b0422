import { createHash } from "node:crypto";

/**
 * Anthropic's prompt cache, as its docs describe it, for the fake model server: a request's
 * prefix (tools, then system, then messages, block by block) is cached at each block that carries
 * `cache_control`, for 5 minutes (or `ttl: "1h"`), if it is at least 1024 tokens long; a later
 * request reads the longest cached prefix that ends within 20 blocks before one of its own
 * breakpoints. Usage then splits as Anthropic reports it: `cache_read_input_tokens` (read),
 * `cache_creation_input_tokens` (written up to the last breakpoint), `input_tokens` (the rest).
 * Tokens are estimated as characters / 4.
 */
const MIN_CACHEABLE_TOKENS = 1024;
const LOOKBACK_BLOCKS = 20;

export interface CacheUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
}

export class AnthropicPromptCache {
  private readonly entries = new Map<string, number>();

  /** The usage this request earns, and the cache updated; undefined when it sets no breakpoint. */
  usageFor(body: Record<string, unknown>, now = Date.now()): CacheUsage | undefined {
    const blocks = prefixBlocks(body);
    const breakpoints = blocks.flatMap((block, i) => (block.cache ? [i] : []));
    if (breakpoints.length === 0) return undefined;
    const hashes: string[] = [];
    const tokens: number[] = [];
    const hash = createHash("sha256");
    let chars = 0;
    for (const block of blocks) {
      hash.update(block.text);
      hashes.push(hash.copy().digest("hex"));
      chars += block.text.length;
      tokens.push(Math.ceil(chars / 4));
    }
    let read = 0;
    for (const b of breakpoints)
      for (let j = b; j >= Math.max(0, b - LOOKBACK_BLOCKS); j--) {
        const expires = this.entries.get(hashes[j]!);
        if (expires !== undefined && expires > now) {
          read = Math.max(read, tokens[j]!);
          break;
        }
      }
    const last = breakpoints.at(-1)!;
    let written = 0;
    for (const b of breakpoints) {
      if (tokens[b]! < MIN_CACHEABLE_TOKENS) continue;
      const ttl = blocks[b]!.cache === "1h" ? 3_600_000 : 300_000;
      this.entries.set(hashes[b]!, now + ttl);
      if (b === last) written = Math.max(0, tokens[b]! - read);
    }
    const total = tokens.at(-1) ?? 0;
    return { input: Math.max(0, total - read - written), cacheRead: read, cacheWrite: written };
  }
}

interface PrefixBlock {
  text: string;
  cache?: "5m" | "1h";
}

function prefixBlocks(body: Record<string, unknown>): PrefixBlock[] {
  const blocks: PrefixBlock[] = [];
  const add = (value: unknown, prefix: string) => {
    if (!value || typeof value !== "object") return;
    const { cache_control, ...rest } = value as Record<string, unknown>;
    const control = cache_control as { ttl?: string } | undefined;
    blocks.push({
      text: `${prefix}${JSON.stringify(rest)}`,
      ...(control ? { cache: control.ttl === "1h" ? "1h" : "5m" } : {}),
    });
  };
  for (const tool of Array.isArray(body.tools) ? body.tools : []) add(tool, "tool:");
  const system = body.system;
  if (typeof system === "string") blocks.push({ text: `system:${system}` });
  else for (const block of Array.isArray(system) ? system : []) add(block, "system:");
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const { role, content } = message as { role?: string; content?: unknown };
    if (typeof content === "string") blocks.push({ text: `${role}:${content}` });
    else for (const block of Array.isArray(content) ? content : []) add(block, `${role}:`);
  }
  return blocks;
}
