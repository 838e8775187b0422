import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The relative links of README.md and docs/: each must name a file or folder that exists and, when
 * it points into a Markdown page with `#anchor`, a heading of that page. External links (a scheme
 * such as https: or mailto:) are not followed: tests never touch the internet.
 */

export type BrokenLink = { file: string; line: number; target: string; reason: string };

/** The Markdown files the check covers: README.md and everything under docs/. */
export function docsFiles(root: string): string[] {
  const files = [join(root, "README.md")];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  if (existsSync(join(root, "docs"))) walk(join(root, "docs"));
  return files.filter((file) => existsSync(file));
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker) {
      if (fence === null) fence = marker[0]!;
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: index + 1, text: line });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const plain = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*~]/g, "");
    const slug = plain
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Inline link and image targets, `[text](target)` and `[text](target "title")`, outside code. */
export function linkTargets(markdown: string): Array<{ line: number; target: string }> {
  const found: Array<{ line: number; target: string }> = [];
  for (const { line, text } of proseLines(markdown)) {
    const withoutCode = text.replace(/`[^`]*`/g, "");
    for (const match of withoutCode.matchAll(
      /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    ))
      found.push({ line, target: match[1]! });
  }
  return found;
}

export function brokenLinks(root: string): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let set = anchorsOf.get(file);
    if (!set) anchorsOf.set(file, (set = headingAnchors(readFileSync(file, "utf8"))));
    return set;
  };
  for (const file of docsFiles(root)) {
    const name = relative(root, file);
    for (const { line, target } of linkTargets(readFileSync(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
      const resolved = pathPart === "" ? file : resolve(dirname(file), decodeURI(pathPart));
      if (!resolved.startsWith(resolve(root))) {
        broken.push({ file: name, line, target, reason: "points outside the repository" });
        continue;
      }
      if (!existsSync(resolved)) {
        broken.push({ file: name, line, target, reason: "no such file" });
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
        broken.push({ file: name, line, target, reason: "an anchor into something not Markdown" });
        continue;
      }
      if (!anchors(resolved).has(anchor))
        broken.push({ file: name, line, target, reason: `no heading #${anchor} there` });
    }
  }
  return broken;
}

const REPO_FOLDERS = [
  "bin",
  "companion",
  "docs",
  "durable-objects",
  "functions",
  "migrations",
  "scripts",
  "test",
  "web",
  "workers",
  "workspace",
];

/**
 * Repository files the docs name in their text (`functions/http/read-body.ts`, workers/webhooks.ts),
 * with an extension and no placeholder: each must exist, so a file moved or renamed without its
 * docs is caught. Placeholders (`<id>`, `*`), folder names and build output (`dist/`) are not checked.
 */
export function missingPaths(root: string): BrokenLink[] {
  const pattern = new RegExp(
    `(?<![\\w./-])(?:${REPO_FOLDERS.join("|")})/[\\w./-]*\\.(?:ts|mts|mjs|js|md|json5?|toml|sql)(?![\\w<*])`,
    "g",
  );
  const missing: BrokenLink[] = [];
  for (const file of docsFiles(root)) {
    const name = relative(root, file);
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((text, index) => {
        for (const match of text.matchAll(pattern)) {
          const path = match[0].replace(/\.$/, "");
          if (path.includes("/dist/")) continue;
          if (!existsSync(join(root, path)))
            missing.push({ file: name, line: index + 1, target: path, reason: "no such file" });
        }
      });
  }
  return missing;
}
