import { load as loadYaml } from "js-yaml";

/**
 * A SKILL.md split into its YAML frontmatter and Markdown body (the AgentSkills format OpenClaw
 * follows). The frontmatter is parsed as YAML; when that fails, a line-by-line `key: value`
 * reading keeps the plain fields usable, as OpenClaw's fallback does. `metadata` may be a YAML
 * mapping or a JSON object written inline (valid YAML flow syntax either way).
 */
export interface SkillFrontmatter {
  fields: Record<string, unknown>;
  body: string;
  /** Set when the frontmatter was not valid YAML and the line reading was used. */
  warning?: string;
}

const MAX_FRONTMATTER_CHARS = 16_384;
const ALIAS_OR_ANCHOR = /(^|[\s[{,:-])[&*][A-Za-z0-9_-]/m;
const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export function parseSkillFile(text: string): SkillFrontmatter {
  const match = FRONTMATTER.exec(text.replace(/^\uFEFF/, ""));
  if (!match) return { fields: {}, body: text };
  const source = match[1]!;
  const body = text.slice(match[0].length);
  // Anchors and aliases can expand a few bytes into gigabytes inside the Durable Object; a skill's
  // frontmatter never needs them, nor more than a few KiB.
  if (source.length > MAX_FRONTMATTER_CHARS || ALIAS_OR_ANCHOR.test(source))
    return {
      fields: lineFields(source),
      body,
      warning: "the frontmatter uses YAML anchors or is over 16 KiB; read line by line",
    };
  try {
    const parsed = loadYaml(source) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return { fields: parsed as Record<string, unknown>, body };
    return { fields: {}, body, warning: "the frontmatter is not a mapping" };
  } catch (error) {
    return {
      fields: lineFields(source),
      body,
      warning: `the frontmatter is not valid YAML (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); read line by line`,
    };
  }
}

/** `key: value` per line, values unquoted; nested or multi-line values are skipped. */
function lineFields(source: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const line of source.split(/\r?\n/)) {
    const pair = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(line);
    if (!pair || pair[2] === "") continue;
    const raw = pair[2]!.trim();
    const unquoted = /^(["'])(.*)\1$/.exec(raw)?.[2] ?? raw;
    fields[pair[1]!] = unquoted === "true" ? true : unquoted === "false" ? false : unquoted;
  }
  return fields;
}
