import type { DbEnv } from "../../db/client.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { resolveSecret } from "../../config/secret-ref.ts";
import { listFiles, readFiles } from "../workspace.ts";
import { parseSkillFile } from "./frontmatter.ts";

/**
 * The agent's skills (tools/skills): `SKILL.md` folders in its workspace, found under `skills/`
 * (first) and `.agents/skills/` (second) at most six levels down. A skill is named by its
 * frontmatter `name` (else its folder); where two roots hold the same name, the first root wins.
 */

/** Workspace roots in precedence order (OpenClaw's 1 and 2; its host-side roots do not exist here). */
export const SKILL_ROOTS = ["skills", ".agents/skills"] as const;
const MAX_DEPTH = 6;
const MAX_SKILLS = 200;

export interface Skill {
  name: string;
  description: string;
  /** Workspace path of its SKILL.md: what the model reads. */
  location: string;
  /** The file's version in the workspace: a changed version means read it again. */
  version: number;
  userInvocable: boolean;
  modelInvocable: boolean;
  gate: SkillGate;
  warning?: string;
}

export interface SkillGate {
  always: boolean;
  os?: string[];
  bins: string[];
  anyBins: string[];
  env: string[];
  config: string[];
  primaryEnv?: string;
}

export async function loadSkills(env: DbEnv, agentId: string): Promise<Skill[]> {
  // One after the other: a run's pass shares one Postgres connection, and parallel queries on it
  // would open a second one.
  const listed = [];
  for (const root of SKILL_ROOTS) listed.push(await listFiles(env, agentId, { dir: root }));
  const paths = listed.flatMap((entries, i) =>
    entries
      .map((entry) => entry.path)
      .filter((path) => isSkillFile(path, SKILL_ROOTS[i]!))
      .map((path) => ({ path, root: i })),
  );
  if (paths.length === 0) return [];
  const files = await readFiles(
    env,
    agentId,
    paths.slice(0, MAX_SKILLS * 2).map((p) => p.path),
  );
  const byName = new Map<string, Skill>();
  for (const { path } of paths.sort((a, b) => a.root - b.root || a.path.localeCompare(b.path))) {
    const file = files.get(path);
    if (!file) continue;
    const skill = skillFrom(path, file.content, file.version);
    if (!byName.has(skill.name)) byName.set(skill.name, skill);
    if (byName.size >= MAX_SKILLS) break;
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function isSkillFile(path: string, root: string): boolean {
  if (!path.startsWith(`${root}/`) || !path.endsWith("/SKILL.md")) return false;
  const depth = path.slice(root.length + 1).split("/").length - 1;
  return depth >= 1 && depth <= MAX_DEPTH;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

function skillFrom(path: string, text: string, version: number): Skill {
  const { fields, warning } = parseSkillFile(text);
  const folder = path.split("/").at(-2) ?? "skill";
  const declared = typeof fields.name === "string" ? fields.name.trim() : "";
  const name = SLUG.test(declared) ? declared : slugOf(folder);
  const description =
    typeof fields.description === "string" ? oneLine(fields.description, 300) : "";
  const warnings = [
    warning,
    declared && !SLUG.test(declared)
      ? `name "${oneLine(declared, 40)}" is not lowercase letters, digits and hyphens; using "${name}"`
      : undefined,
  ].filter(Boolean);
  return {
    name,
    description,
    location: path,
    version,
    userInvocable: fields["user-invocable"] !== false,
    modelInvocable: fields["disable-model-invocation"] !== true,
    gate: gateOf(fields.metadata),
    ...(warnings.length ? { warning: warnings.join("; ") } : {}),
  };
}

function slugOf(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return slug || "skill";
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `metadata.openclaw` (or the older `metadata.clawdbot`): the load-time gates. */
function gateOf(metadata: unknown): SkillGate {
  const meta = record(metadata);
  const block = record(meta.openclaw ?? meta.clawdbot);
  const requires = record(block.requires);
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  return {
    always: block.always === true,
    ...(Array.isArray(block.os) ? { os: strings(block.os) } : {}),
    bins: strings(requires.bins),
    anyBins: strings(requires.anyBins),
    env: strings(requires.env),
    config: strings(requires.config),
    ...(typeof block.primaryEnv === "string" ? { primaryEnv: block.primaryEnv } : {}),
  };
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

export interface EligibilityContext {
  config: EdgeclawConfig;
  agentId: string;
  /** The Worker env: `requires.env` names are looked up here. */
  env: Record<string, unknown>;
  /** The tools this run has: `requires.bins` needs `exec` (binaries run in the sandbox). */
  toolNames: readonly string[];
}

/** Why a skill is left out of this agent's runs, or undefined when it is in. */
export function exclusionReason(skill: Skill, ctx: EligibilityContext): string | undefined {
  const entry = ctx.config.skills.entries[skill.name];
  if (entry?.enabled === false) return `disabled (skills.entries.${skill.name}.enabled)`;
  const allow = allowlistFor(ctx.config, ctx.agentId);
  if (allow && !allow.includes(skill.name)) return "not in this agent's skills allowlist";
  if (skill.gate.always) return undefined;
  // Commands run in the Linux sandbox, whatever the host.
  if (skill.gate.os && !skill.gate.os.includes("linux"))
    return `os: ${skill.gate.os.join(", ")} only`;
  if ((skill.gate.bins.length || skill.gate.anyBins.length) && !ctx.toolNames.includes("exec"))
    return "needs binaries, and this run has no exec tool";
  const missingEnv = skill.gate.env.filter((name) => !envPresent(name, skill, ctx));
  if (missingEnv.length) return `env not set: ${missingEnv.join(", ")}`;
  const falsy = skill.gate.config.filter((path) => !truthyPath(ctx.config, path));
  if (falsy.length) return `config not set: ${falsy.join(", ")}`;
  return undefined;
}

/** The agent's own list replaces `agents.defaults.skills`; unset everywhere means every skill. */
export function allowlistFor(config: EdgeclawConfig, agentId: string): string[] | undefined {
  const own = config.agents.list.find((entry) => entry.id === agentId)?.skills;
  if (own) return own;
  const entries = (config.agents as { entries?: Record<string, { skills?: unknown }> }).entries;
  const fromEntries = entries?.[agentId]?.skills;
  if (Array.isArray(fromEntries))
    return fromEntries.filter((s): s is string => typeof s === "string");
  return config.agents.defaults.skills;
}

function envPresent(name: string, skill: Skill, ctx: EligibilityContext): boolean {
  const value = ctx.env[name];
  if (typeof value === "string" && value) return true;
  const entry = ctx.config.skills.entries[skill.name];
  if (entry?.env?.[name]) return true;
  return name === skill.gate.primaryEnv && resolveSecret(entry?.apiKey, ctx.env) !== undefined;
}

function truthyPath(config: EdgeclawConfig, path: string): boolean {
  let current: unknown = config;
  for (const segment of path.split(".")) {
    if (!current || typeof current !== "object") return false;
    current = (current as Record<string, unknown>)[segment];
  }
  return Boolean(current) && !(Array.isArray(current) && current.length === 0);
}
