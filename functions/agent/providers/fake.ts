import {
  ModelError,
  type Message,
  type ModelRequest,
  type ToolCall,
  type ToolSpec,
} from "../types.ts";
import { CURRENT_MESSAGE_HEADER } from "../../routing/group-history.ts";
import type { ProviderCall, ProviderResult } from "./types.ts";

/**
 * The demo model: answers inside the Worker with no network when `EDGECLAW_FAKE_MODEL=1`. Every
 * reply says it is the fake, so nobody mistakes a demo for a real model. It is scripted just enough
 * to show the whole loop: "read AGENTS.md", "write notes.md: hello", "fetch https://…",
 * "session status", "run `uname -a`" (exec, where the agent has a sandbox) and "spawn a sub-agent
 * to <task>" (sessions_spawn, label "demo helper") become tool calls
 * (when the tool is offered), and the next turn summarises the tool results.
 */

export const FAKE_PROVIDER_ID = "fake";
export const FAKE_MODEL_REF = "fake/edgeclaw-demo";
export const FAKE_REPLY_PREFIX = "[edgeclaw fake model]";

export const callFakeModel: ProviderCall = async (_model, request) => {
  const reply = fakeReply(request);
  for (const piece of splitForStreaming(reply.text)) {
    if (request.signal?.aborted) throw new ModelError("aborted", "the model call was aborted");
    request.onTextDelta?.(piece);
    // Yield between deltas so consumers see a stream, not one burst.
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
  }
  return reply;
};

/** The reply, decided from the transcript alone (pure, so tests and demos are repeatable). */
export function fakeReply(
  request: Pick<ModelRequest, "system" | "messages" | "tools">,
): ProviderResult {
  const usage = {
    inputTokens: estimateTokens(request.system + request.messages.map(messageText).join("\n")),
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  const answer = (text: string, toolCalls: ToolCall[] = []): ProviderResult => ({
    text,
    toolCalls,
    usage: { ...usage, outputTokens: estimateTokens(text + JSON.stringify(toolCalls)) },
    stopReason: toolCalls.length ? "tool_use" : "end",
  });

  const last = request.messages.at(-1);
  if (!last)
    return answer(
      `${FAKE_REPLY_PREFIX} Hello! I am the scripted demo model; set a real model to get real answers.`,
    );
  if (last.role === "tool") return answer(summariseToolResults(request.messages));
  if (last.role === "assistant") return answer(`${FAKE_REPLY_PREFIX} (nothing new to answer)`);

  const words = userWords(last.content);
  const intent = detectIntent(words);
  if (!intent) return answer(`${FAKE_REPLY_PREFIX} You said: ${words}`);
  const tool = request.tools.find((candidate) => candidate.name === intent.tool);
  if (!tool)
    return answer(
      `${FAKE_REPLY_PREFIX} You asked for the ${intent.tool} tool, but it is not available in this session.`,
    );
  const call: ToolCall = {
    id: `fake_call_${request.messages.length}`,
    name: intent.tool,
    arguments: argumentsFor(tool, intent),
  };
  return answer(`${FAKE_REPLY_PREFIX} Calling ${intent.tool}…`, [call]);
}

/** A fence as functions/agent/untrusted-text.ts draws it: start line, Source line, ---, text, end line. */
const FENCED_BLOCK =
  /<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]+)">>>\nSource: ([^\n]*)\n---\n([\s\S]*?)\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="\1">>>/g;
/** Fences the gateway adds around context, not around what the sender wrote now. */
const CONTEXT_SOURCES = /^(?:channel system events|the dropped messages|chat history)/;

/**
 * What the person wrote in this turn, as a reader would see it: a channel sender's message arrives
 * fenced as untrusted content (turn-text.ts), with system events, dropped-message summaries and
 * group history around it. The demo answers with the message itself, never with the fence lines.
 */
export function userWords(turn: string): string {
  const headerAt = turn.indexOf(CURRENT_MESSAGE_HEADER);
  const current = headerAt >= 0 ? turn.slice(headerAt + CURRENT_MESSAGE_HEADER.length) : turn;
  const words = current
    .replace(FENCED_BLOCK, (_block, _id: string, source: string, inner: string) =>
      CONTEXT_SOURCES.test(source) ? "" : inner,
    )
    .replace(/^\[Queue overflow: [^\n]*\]$/gm, "")
    .trim();
  return words || current.trim();
}

interface Intent {
  tool: "read" | "write" | "web_fetch" | "session_status" | "exec" | "sessions_spawn";
  command?: string;
  path?: string;
  content?: string;
  url?: string;
  task?: string;
}

function detectIntent(text: string): Intent | undefined {
  const spawn = /\bspawn a sub-?agent to\s+([\s\S]+)$/i.exec(text);
  if (spawn) return { tool: "sessions_spawn", task: spawn[1]!.trim() };
  const run = /\brun\s+`([^`\n]+)`/i.exec(text);
  if (run) return { tool: "exec", command: run[1]!.trim() };
  const write = /\bwrite\s+([^\s:]+)\s*:\s*([\s\S]+)$/i.exec(text);
  if (write) return { tool: "write", path: cleanPath(write[1]!), content: write[2]!.trim() };
  const fetchUrl = /\bfetch\s+(https?:\/\/\S+)/i.exec(text);
  if (fetchUrl) return { tool: "web_fetch", url: fetchUrl[1]!.replace(/[.,;!?)\]]+$/, "") };
  const read = /\bread\s+([^\s]+)/i.exec(text);
  if (read) return { tool: "read", path: cleanPath(read[1]!) };
  if (/\bsession[ _]?status\b|^\s*status\s*\??\s*$/i.test(text)) return { tool: "session_status" };
  return undefined;
}

/** Uses the parameter names the offered tool actually declares (`path` vs `file_path`, …). */
function argumentsFor(tool: ToolSpec, intent: Intent): Record<string, unknown> {
  const declared = Object.keys(tool.parameters.properties ?? {});
  const pick = (candidates: string[]) =>
    candidates.find((name) => declared.includes(name)) ?? candidates[0]!;
  const args: Record<string, unknown> = {};
  if (intent.path !== undefined)
    args[pick(["path", "file_path", "filePath", "file"])] = intent.path;
  if (intent.content !== undefined) args[pick(["content", "contents", "text"])] = intent.content;
  if (intent.url !== undefined) args[pick(["url", "href"])] = intent.url;
  if (intent.command !== undefined) args[pick(["command", "cmd"])] = intent.command;
  if (intent.task !== undefined) Object.assign(args, { task: intent.task, label: "demo helper" });
  return args;
}

function summariseToolResults(messages: Message[]): string {
  const results: Array<Extract<Message, { role: "tool" }>> = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "tool") break;
    results.unshift(message);
  }
  const lines = results.map(
    (result) =>
      `The ${result.name} tool ${result.isError ? "failed" : "returned"}: ${excerpt(result.content, 400)}`,
  );
  return `${FAKE_REPLY_PREFIX} ${lines.join("\n")}`;
}

function splitForStreaming(text: string): string[] {
  const words = text.split(/(?<=\s)/);
  const size = Math.max(1, Math.ceil(words.length / 4));
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += size) pieces.push(words.slice(i, i + size).join(""));
  return pieces;
}

function cleanPath(path: string): string {
  return path.replace(/^["'`]+|["'`.,;!?)]+$/g, "");
}

function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat || "(empty)";
}

function messageText(message: Message): string {
  return message.content;
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
