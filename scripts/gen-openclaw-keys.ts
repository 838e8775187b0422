/**
 * Regenerates functions/config/openclaw-keys.json — every config key the OpenClaw configuration pages
 * name — from a folder of those pages (one markdown file per page):
 *
 *   npx tsx scripts/gen-openclaw-keys.ts <openclaw-docs-folder>
 *
 * Keys come from the pages' json5 examples (read by a tolerant scanner: the examples hold `…` and
 * comments) and from dotted key paths in backticks (`channels.slack.dmPolicy`). `config:check` uses
 * the tree to tell an OpenClaw key edgeclaw does not implement yet (a warning) from a typo (an error).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

type KeyTree = { [key: string]: KeyTree };

const PAGE = /^gateway__config.*\.md$/;
const ANY = "*";
const ITEM = "[]";

function add(tree: KeyTree, path: string[]): void {
  let node = tree;
  for (const segment of path) node = node[segment] ??= {};
}

/** Keys of a json5 example: object keys with their nesting, arrays as `[]`. */
function scanJson5(text: string): string[][] {
  const paths: string[][] = [];
  // Each open container: its kind and, for objects, the key whose value is being read.
  const stack: Array<{ kind: "{" | "["; key?: string }> = [];
  const token =
    /\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[A-Za-z_$][\w$-]*|[{}[\]:,]|\S/g;
  let pending: string | undefined;
  for (const match of text.matchAll(token)) {
    const t = match[0];
    if (t.startsWith("//") || t.startsWith("/*")) continue;
    const top = stack[stack.length - 1];
    if (t === ":") {
      if (pending !== undefined && top?.kind === "{") {
        top.key = pending;
        paths.push([...keyPath(stack)]);
      }
      pending = undefined;
    } else if (t === "{" || t === "[") {
      stack.push({ kind: t });
      pending = undefined;
    } else if (t === "}" || t === "]") {
      stack.pop();
      pending = undefined;
    } else if (t === ",") {
      if (top) top.key = undefined;
      pending = undefined;
    } else {
      pending = /^["']/.test(t) ? t.slice(1, -1) : t;
    }
  }
  return paths;
}

function keyPath(stack: Array<{ kind: "{" | "["; key?: string }>): string[] {
  const path: string[] = [];
  for (const frame of stack) {
    if (frame.kind === "[") path.push(ITEM);
    else if (frame.key !== undefined) path.push(frame.key);
  }
  return path;
}

/** `agents.list[].tools.<name>` → ["agents", "list", "[]", "tools", "*"]. */
function splitDotted(text: string): string[] | undefined {
  if (!/^[a-z][\w-]*(\[\]|\.|$)/i.test(text) || /\s/.test(text)) return undefined;
  const segments: string[] = [];
  for (const part of text.split(".")) {
    const bare = part.replace(/\[[^\]]*\]/g, "");
    if (bare === "") return undefined;
    segments.push(/^[<{*]/.test(bare) ? ANY : bare);
    if (part.includes("[")) segments.push(ITEM);
  }
  return segments.every((s) => s === ANY || s === ITEM || /^[\w$-]+$/.test(s))
    ? segments
    : undefined;
}

export function buildKeyTree(pages: string[]): KeyTree {
  const tree: KeyTree = {};
  const examplePaths: string[][] = [];
  for (const page of pages) {
    for (const block of page.matchAll(/```json5?\s([\s\S]*?)```/g))
      examplePaths.push(...scanJson5(block[1]!));
  }
  for (const path of examplePaths) add(tree, path);
  // A lone key at the root is a fragment (a SecretRef's `source`/`id` shown on its own), not a block.
  for (const [root, children] of Object.entries(tree))
    if (Object.keys(children).length === 0) delete tree[root];
  // Dotted paths count when they start at a root key the examples use (so prose like `foo.md` does not).
  const roots = new Set(Object.keys(tree));
  for (const page of pages) {
    for (const code of page.matchAll(/`([^`\n]+)`/g)) {
      const segments = splitDotted(code[1]!.replace(/[:=].*$/, "").trim());
      if (segments && segments.length > 1 && roots.has(segments[0]!)) add(tree, segments);
    }
  }
  return tree;
}

function sorted(tree: KeyTree): KeyTree {
  return Object.fromEntries(
    Object.keys(tree)
      .sort()
      .map((key) => [key, sorted(tree[key]!)]),
  );
}

const GENERATED_BY =
  "scripts/gen-openclaw-keys.ts from the OpenClaw configuration pages in `pages`; do not edit by hand";

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const folder = process.argv[2];
  if (!folder) {
    console.error("usage: npx tsx scripts/gen-openclaw-keys.ts <openclaw-docs-folder>");
    process.exit(2);
  }
  const files = readdirSync(folder)
    .filter((name) => PAGE.test(name))
    .sort();
  const tree = sorted(buildKeyTree(files.map((name) => readFileSync(join(folder, name), "utf8"))));
  // Data, not code: the tree is JSON (openclaw-keys.ts types it), written as biome formats JSON.
  const out = fileURLToPath(new URL("../functions/config/openclaw-keys.json", import.meta.url));
  writeFileSync(
    out,
    `${JSON.stringify({ generatedBy: GENERATED_BY, pages: files, tree }, null, 2)}\n`,
  );
  console.log(`wrote ${out} (${files.length} pages)`);
}
