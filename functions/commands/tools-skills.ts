import type { SessionControl, ToolsQuery } from "./session-control.ts";

/** A reply, or text for the model (execute.ts's CommandResult, kept here to avoid an import cycle). */
interface Result {
  reply?: string;
  forwardText?: string;
}

/**
 * `/tools [compact|verbose]` (what the agent may use right now, tools/slash-commands) and
 * `/skill <name> [request]` (run one of the agent's skills: the request goes to the model with
 * the instruction to read that skill first). Both ask the session, which builds the same toolset
 * and skill list a run would get.
 */

export async function toolsCommand(
  args: string,
  session: SessionControl,
  ctx: ToolsQuery,
): Promise<Result> {
  const mode = args.trim().toLowerCase() || "compact";
  if (mode !== "compact" && mode !== "verbose") return { reply: "Usage: /tools [compact|verbose]" };
  const tools = await session.tools(ctx);
  if (tools.length === 0) return { reply: "🧰 No tools are available to the agent in this chat." };
  if (mode === "compact")
    return {
      reply: `🧰 Tools available now (${tools.length}): ${tools.map((t) => t.name).join(", ")}`,
    };
  return {
    reply: [
      `🧰 Tools available now (${tools.length}):`,
      ...tools.map((tool) => `• ${tool.name} — ${firstSentence(tool.description)}`),
    ].join("\n"),
  };
}

export async function skillCommand(
  args: string,
  session: SessionControl,
  ctx: ToolsQuery,
): Promise<Result> {
  const [name, ...rest] = args.trim().split(/\s+/).filter(Boolean);
  const skills = (await session.skills(ctx)).filter((skill) => skill.userInvocable);
  const usable = skills.filter((skill) => !skill.excluded);
  if (!name) {
    if (usable.length === 0) return { reply: "No skills are available to this agent." };
    return {
      reply: [
        "Usage: /skill <name> [request]. Skills:",
        ...usable.map((skill) => `• ${skill.name} — ${skill.description || skill.location}`),
      ].join("\n"),
    };
  }
  const wanted = name.toLowerCase();
  const skill = skills.find((candidate) => candidate.name === wanted);
  if (!skill)
    return {
      reply: `No skill named "${name}".${usable.length ? ` Available: ${usable.map((s) => s.name).join(", ")}.` : ""}`,
    };
  if (skill.excluded)
    return { reply: `The ${skill.name} skill is not available here: ${skill.excluded}.` };
  const request = rest.join(" ").trim();
  return {
    forwardText: [
      `Use the "${skill.name}" skill: read ${skill.location} with the read tool first, then follow it.`,
      request || "Run it now.",
    ].join("\n\n"),
  };
}

function firstSentence(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  const end = line.search(/[.!?](\s|$)/);
  return end === -1 ? line : line.slice(0, end + 1);
}
