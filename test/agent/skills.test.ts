import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import type { PromptRuntime } from "../../functions/agent/prompt-input.ts";
import { loadSystemPrompt } from "../../functions/agent/prompt-load.ts";
import { writeFile } from "../../functions/agent/workspace.ts";
import { ensureWorkspaceSeeded } from "../../functions/agent/workspace-seeding.ts";
import { exclusionReason, loadSkills } from "../../functions/agent/skills/catalog.ts";
import { parseSkillFile } from "../../functions/agent/skills/frontmatter.ts";

/**
 * Skills (tools/skills) end to end on the real workspace store: SKILL.md files written to an
 * agent's Postgres workspace, discovered, gated and listed in the system prompt the run gets.
 */

const runtime = (toolNames: string[]): PromptRuntime => ({
  now: new Date("2026-03-01T10:00:00Z"),
  tools: toolNames.map((name) => ({ name, description: `${name} tool` })),
  channel: "slack",
  chatType: "direct",
  modelRef: "anthropic/claude-sonnet-4-5",
  mainPrivateSession: true,
});

async function agentWith(files: Record<string, string>): Promise<string> {
  const agentId = `skills-${crypto.randomUUID().slice(0, 8)}`;
  await ensureWorkspaceSeeded(env, agentId, { "AGENTS.md": "rules" });
  for (const [path, content] of Object.entries(files)) await writeFile(env, agentId, path, content);
  return agentId;
}

const skill = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\nDo the ${name} thing.\n`;

async function promptFor(agentId: string, config = parseConfig({}), tools = ["read", "exec"]) {
  return (await loadSystemPrompt(env, config, { id: agentId }, runtime(tools))).text;
}

describe("skills in the workspace", () => {
  it("lists each SKILL.md under skills/ (grouped folders too) with name, description, location and version", async () => {
    const agentId = await agentWith({
      "skills/weather/SKILL.md": skill("weather", "Forecasts from the met service."),
      "skills/personal/research/SKILL.md": skill("research", "Deep research & <citations>."),
      "skills/notes.md": "not a skill",
    });
    const text = await promptFor(agentId);
    expect(text).toContain("## Skills");
    expect(text).toContain("<location>skills/weather/SKILL.md</location>");
    expect(text).toContain("<location>skills/personal/research/SKILL.md</location>");
    expect(text).toContain("<description>Deep research &#38; &#60;citations&#62;.</description>");
    expect(text).toMatch(/<name>weather<\/name>[\s\S]*<version>1<\/version>/);
    await writeFile(env, agentId, "skills/weather/SKILL.md", skill("weather", "Forecasts, v2."));
    expect(await promptFor(agentId)).toMatch(/<name>weather<\/name>[\s\S]*?<version>2<\/version>/);
  });

  it("has no Skills section without skills, and none when the run cannot read files", async () => {
    const none = await agentWith({});
    expect(await promptFor(none)).not.toContain("## Skills");
    const some = await agentWith({ "skills/a/SKILL.md": skill("alpha", "A.") });
    expect(await promptFor(some, parseConfig({}), ["exec"])).not.toContain("## Skills");
  });

  it("skills/ wins over .agents/skills/ for the same name; the folder names a skill without a valid name", async () => {
    const agentId = await agentWith({
      "skills/deploy/SKILL.md": skill("deploy", "The workspace one."),
      ".agents/skills/deploy/SKILL.md": skill("deploy", "The project one."),
      ".agents/skills/Lint_Tool/SKILL.md": skill("Lint Tool!", "Lints."),
    });
    const skills = await loadSkills(env, agentId);
    expect(skills.map((s) => [s.name, s.description])).toEqual([
      ["deploy", "The workspace one."],
      ["lint-tool", "Lints."],
    ]);
    expect(skills[1]!.warning).toContain('using "lint-tool"');
  });

  it("gates: disabled entries, allowlists, os, binaries without exec, env and config requirements", async () => {
    const agentId = await agentWith({
      "skills/plain/SKILL.md": skill("plain", "Always there."),
      "skills/off/SKILL.md": skill("off", "Disabled in config."),
      "skills/mac/SKILL.md": skill(
        "mac",
        "macOS only.",
        'metadata: { "openclaw": { "os": ["darwin"] } }\n',
      ),
      "skills/gh/SKILL.md": skill(
        "gh",
        "Needs gh.",
        'metadata: { "openclaw": { "requires": { "bins": ["gh"] } } }\n',
      ),
      "skills/gem/SKILL.md": skill(
        "gem",
        "Needs a key.",
        "metadata:\n  openclaw:\n    primaryEnv: GEMINI_API_KEY\n    requires:\n      env: [GEMINI_API_KEY]\n",
      ),
      "skills/web/SKILL.md": skill(
        "web",
        "Needs search.",
        'metadata: { "openclaw": { "requires": { "config": ["tools.web.search.provider"] } } }\n',
      ),
      "skills/hidden/SKILL.md": skill(
        "hidden",
        "Only by command.",
        "disable-model-invocation: true\n",
      ),
    });
    const config = parseConfig({ skills: { entries: { off: { enabled: false } } } });
    const text = await promptFor(agentId, config);
    const listed = [...text.matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]);
    expect(listed).toEqual(["gh", "plain"]);
    expect(await promptFor(agentId, config, ["read"])).not.toContain("<name>gh</name>");

    const skills = await loadSkills(env, agentId);
    const reason = (name: string, cfg = config, extraEnv: Record<string, unknown> = {}) =>
      exclusionReason(skills.find((s) => s.name === name)!, {
        config: cfg,
        agentId,
        env: extraEnv,
        toolNames: ["read", "exec"],
      });
    expect(reason("off")).toBe("disabled (skills.entries.off.enabled)");
    expect(reason("mac")).toBe("os: darwin only");
    expect(reason("gem")).toBe("env not set: GEMINI_API_KEY");
    expect(reason("gem", config, { GEMINI_API_KEY: "k" })).toBeUndefined();
    expect(
      reason("gem", parseConfig({ skills: { entries: { gem: { apiKey: "literal" } } } })),
    ).toBeUndefined();
    expect(reason("web")).toBe("config not set: tools.web.search.provider");
    expect(
      reason("web", parseConfig({ tools: { web: { search: { provider: "brave" } } } })),
    ).toBeUndefined();
  });

  it("agents.defaults.skills is the baseline allowlist; an agent's own list replaces it, and [] means none", async () => {
    const agentId = await agentWith({
      "skills/a/SKILL.md": skill("alpha", "A."),
      "skills/b/SKILL.md": skill("beta", "B."),
    });
    const names = async (config: ReturnType<typeof parseConfig>) =>
      [...(await promptFor(agentId, config)).matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]);
    expect(await names(parseConfig({ agents: { defaults: { skills: ["alpha"] } } }))).toEqual([
      "alpha",
    ]);
    expect(
      await names(
        parseConfig({
          agents: { defaults: { skills: ["alpha"] }, list: [{ id: agentId, skills: ["beta"] }] },
        }),
      ),
    ).toEqual(["beta"]);
    expect(await names(parseConfig({ agents: { list: [{ id: agentId, skills: [] }] } }))).toEqual(
      [],
    );
  });

  it("keeps within skills.limits.maxSkillsPromptChars: descriptions shortened first, then skills left off with a note", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++)
      files[`skills/s${i}/SKILL.md`] = skill(
        `skill-${String(i).padStart(2, "0")}`,
        `A long description ${"x".repeat(200)}`,
      );
    const agentId = await agentWith(files);
    const section = (chars: number) => {
      const text = promptFor(
        agentId,
        parseConfig({ skills: { limits: { maxSkillsPromptChars: chars } } }),
      );
      return text.then((t) =>
        t.slice(t.indexOf("## Skills"), t.indexOf("</available_skills>") + 200),
      );
    };
    const roomy = await section(100_000);
    expect(roomy).toContain("x".repeat(200));
    const tight = await section(2500);
    expect(tight).toContain("<name>skill-11</name>");
    expect(tight).not.toContain("x".repeat(200));
    expect(tight).toContain("descriptions shortened to fit skills.limits.maxSkillsPromptChars");
    const tiny = await section(1200);
    expect(tiny).toMatch(/\(\d+ more skills not listed: skills\.limits\.maxSkillsPromptChars\)/);
    expect(tiny).not.toContain("<name>skill-11</name>");
  });
});

describe("SKILL.md frontmatter", () => {
  it("reads YAML, and falls back to line-by-line reading when the YAML is broken", () => {
    const ok = parseSkillFile(
      '---\nname: a\ndescription: "Quoted: with colon"\nuser-invocable: false\n---\nbody',
    );
    expect(ok.fields).toEqual({
      name: "a",
      description: "Quoted: with colon",
      "user-invocable": false,
    });
    expect(ok.body).toBe("body");
    const broken = parseSkillFile(
      "---\nname: b\ndescription: fine\nmetadata: { unclosed\n---\nbody",
    );
    expect(broken.fields).toMatchObject({ name: "b", description: "fine" });
    expect(broken.warning).toContain("not valid YAML");
    expect(parseSkillFile("no frontmatter").fields).toEqual({});
    const bomb = parseSkillFile('---\nname: c\na: &x ["lol","lol"]\nb: [*x,*x,*x]\n---\nbody');
    expect(bomb.fields.name).toBe("c");
    expect(bomb.warning).toContain("anchors");
  });
});
