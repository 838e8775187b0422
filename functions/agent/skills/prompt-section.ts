import type { Skill } from "./catalog.ts";

/**
 * The `## Skills` section: a compact `<available_skills>` list the model reads SKILL.md files from
 * on demand (tools/skills "Token impact"). Within `maxChars` every skill keeps its name, location
 * and version first; descriptions fill what budget is left, shortened, then are dropped; only when
 * even the bare list does not fit are skills left off, and the section says how many.
 */
const INTRO = [
  "## Skills",
  "Skills are instructions for specific tasks, kept in the workspace. Before you start a task a skill below covers, read its SKILL.md with the read tool (its location), and follow it; read it again when its version changes. In a skill, {baseDir} means the folder its SKILL.md is in.",
].join("\n");

export function skillsPromptSection(
  skills: readonly Skill[],
  maxChars: number,
): string | undefined {
  if (skills.length === 0) return undefined;
  const full = render(skills, () => undefined, skills.length);
  if (full.length <= maxChars) return full;
  // Bare identities first; if they fit, spend what is left on descriptions, shortest cut first.
  let shown = skills.length;
  while (shown > 0 && render(skills, () => "", shown).length > maxChars) shown--;
  if (shown === 0) return undefined;
  const bare = render(skills, () => "", shown).length;
  const perSkill = Math.floor((maxChars - bare) / shown) - "<description></description>".length - 5;
  return render(
    skills,
    (skill) =>
      perSkill < 12
        ? ""
        : skill.description.length > perSkill
          ? `${skill.description.slice(0, perSkill - 1)}…`
          : skill.description,
    shown,
  );
}

function render(
  skills: readonly Skill[],
  describe: (skill: Skill) => string | undefined,
  shown: number,
): string {
  const items = skills.slice(0, shown).map((skill) => {
    const description = describe(skill) ?? skill.description;
    return [
      "  <skill>",
      `    <name>${xml(skill.name)}</name>`,
      ...(description ? [`    <description>${xml(description)}</description>`] : []),
      `    <location>${xml(skill.location)}</location>`,
      `    <version>${skill.version}</version>`,
      "  </skill>",
    ].join("\n");
  });
  const omitted = skills.length - shown;
  const shortened = skills.slice(0, shown).some((skill) => describe(skill) !== undefined);
  const note =
    omitted > 0
      ? `\n(${omitted} more skill${omitted === 1 ? "" : "s"} not listed: skills.limits.maxSkillsPromptChars)`
      : shortened
        ? "\n(descriptions shortened to fit skills.limits.maxSkillsPromptChars)"
        : "";
  return `${INTRO}\n<available_skills>\n${items.join("\n")}\n</available_skills>${note}`;
}

function xml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
