import type { ContextReport, ToolsQuery } from "../../../functions/commands/session-control.ts";
import { estimateTokens } from "../../../functions/agent/compaction.ts";
import { loadSystemPrompt } from "../../../functions/agent/prompt-load.ts";
import { isMainPrivateSession } from "../../../functions/agent/private-session.ts";
import type { ChatType } from "../../../functions/core/envelope.ts";
import { currentSessionId } from "../lifecycle.ts";
import { status } from "../status.ts";
import type { SessionState } from "../state.ts";
import { contextWindow } from "./context.ts";
import { modelMessages } from "./pruning.ts";
import { toolsetFor } from "./toolset-query.ts";

/**
 * `/context`: the system prompt the next run here would get (built the way a run builds it, from
 * the same workspace files, skills and toolset), the tool schemas beside it and the transcript,
 * measured. Reads the workspace from Postgres like a run's setup; calls no model.
 */
export async function contextReport(s: SessionState, query: ToolsQuery): Promise<ContextReport> {
  const tools = toolsetFor(s, query);
  const current = status(s);
  const chatType = s.store.meta.get("chatType") as ChatType | undefined;
  const prompt = await loadSystemPrompt(
    s.env,
    s.config,
    { id: query.agentId, name: s.config.agents.list.find((a) => a.id === query.agentId)?.name },
    {
      now: new Date(),
      channel: query.route?.channel ?? query.sender.channel,
      chatType,
      mainPrivateSession: isMainPrivateSession({ chatType, senderIsOwner: query.senderIsOwner }),
      modelRef: current.model,
      tools,
      thinking: current.thinkLevel,
    },
  );
  const skills = section(prompt.text, "## Skills");
  const schemas = tools.map((tool) => ({
    name: tool.name,
    chars: JSON.stringify({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    }).length,
  }));
  const sessionId = currentSessionId(s, Date.now());
  const messages = modelMessages(s, sessionId);
  const pruning = s.store.meta.getJson(`pruning:${sessionId}`);
  const defaults = s.config.agents.defaults;
  return {
    model: current.model,
    contextWindow: contextWindow(s, undefined),
    systemPromptChars: prompt.text.length,
    projectContextChars: prompt.files.reduce((sum, file) => sum + file.injectedChars, 0),
    bootstrapMaxChars: defaults.bootstrapMaxChars,
    bootstrapTotalMaxChars: defaults.bootstrapTotalMaxChars,
    files: prompt.files.map((file) => ({
      path: file.path,
      status: file.status,
      rawChars: file.rawChars,
      injectedChars: file.injectedChars,
      ...(file.limitedBy ? { limitedBy: file.limitedBy } : {}),
    })),
    skills: {
      promptChars: skills.length,
      entries: [...skills.matchAll(/<skill>[\s\S]*?<name>([^<]*)<\/name>[\s\S]*?<\/skill>/g)].map(
        (match) => ({ name: match[1]!, chars: match[0].length }),
      ),
    },
    tools: {
      names: tools.map((tool) => tool.name),
      listChars: section(prompt.text, "## Tooling").length,
      schemaChars: schemas.reduce((sum, schema) => sum + schema.chars, 0),
      schemas: schemas.sort((a, b) => b.chars - a.chars),
    },
    transcript: {
      messages: messages.length,
      tokens: estimateTokens(messages),
      ...(pruning && (pruning.soft.length || pruning.hard.length)
        ? { pruned: { trimmed: pruning.soft.length, cleared: pruning.hard.length } }
        : {}),
    },
  };
}

/** One `## Heading` section of the prompt, up to the next heading of its level. */
function section(text: string, heading: string): string {
  const start = text.startsWith(`${heading}\n`) ? 0 : text.indexOf(`\n${heading}\n`);
  if (start < 0) return "";
  const from = start === 0 ? 0 : start + 1;
  const next = text.indexOf("\n## ", from + heading.length);
  return text.slice(from, next < 0 ? undefined : next);
}
