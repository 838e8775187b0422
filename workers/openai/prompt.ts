import { invalidRequest } from "./errors.ts";
import type { ChatCompletionRequest, ChatMessage, ContentPart } from "./request-schema.ts";

/**
 * Turns `messages[]` into the text of one inbound event. The latest user message is what the
 * agent answers. OpenClaw keeps the conversation server-side, so earlier messages are only
 * injected (with OpenClaw's history wrapper strings) when the request runs in a fresh session
 * that has no transcript of its own; in a persistent session they are already in the transcript
 * and are not injected again. System/developer messages are the caller's instructions for this
 * turn and are always passed along, marked as such.
 */

const HISTORY_HEADER = "[Chat messages since your last reply - for context]";
const CURRENT_HEADER = "[Current message - respond to this]";
const INSTRUCTIONS_HEADER = "[Instructions from the API caller]";

export function buildInboundText(
  request: ChatCompletionRequest,
  persistentSession: boolean,
): string {
  const messages = request.messages;
  let lastUser = -1;
  messages.forEach((message, index) => {
    if (message.role === "user") lastUser = index;
  });
  if (lastUser < 0)
    throw invalidRequest(
      "`messages` must contain a user message",
      "messages",
      "missing_user_message",
    );

  const current = textOf(messages[lastUser]!);
  if (current.trim() === "" && !hasImage(messages[lastUser]!))
    throw invalidRequest("The last user message has no text", `messages.${lastUser}.content`);

  const instructions = messages
    .map((message) =>
      message.role === "system" || message.role === "developer" ? textOf(message) : "",
    )
    .filter((text) => text.trim() !== "");
  const history = persistentSession
    ? []
    : messages.slice(0, lastUser).flatMap((message) => {
        if (message.role !== "user" && message.role !== "assistant") return [];
        const text = textOf(message);
        return text.trim() ? [`${speaker(message)}: ${text}`] : [];
      });

  return composeInboundText(instructions, history, current);
}

/**
 * One event's text from the caller's instructions, the earlier turns it sent (`User: …` /
 * `Assistant: …` lines, only for a fresh session) and the message to answer, under OpenClaw's
 * headers; just the message when there is nothing else. Shared by both endpoints.
 */
export function composeInboundText(
  instructions: string[],
  history: string[],
  current: string,
): string {
  if (!instructions.length && !history.length) return current;
  const blocks: string[] = [];
  if (instructions.length) blocks.push(`${INSTRUCTIONS_HEADER}\n${instructions.join("\n\n")}`);
  if (history.length) blocks.push(`${HISTORY_HEADER}\n${history.join("\n")}`);
  blocks.push(`${CURRENT_HEADER}\n${current}`);
  return blocks.join("\n\n");
}

/**
 * Parts of the OpenAI contract this gateway cannot honour are refused up front, so a client never
 * gets an answer that silently ignored what it asked for.
 */
export function rejectUnsupported(request: ChatCompletionRequest): void {
  const toolChoiceNone = request.tool_choice === "none";
  if (request.tools?.length && !toolChoiceNone) {
    throw invalidRequest(
      'Client-side function tools are not supported by this gateway (the agent uses its own tools); omit `tools` or set tool_choice to "none"',
      "tools",
      "unsupported_client_tools",
    );
  }
  if (typeof request.tool_choice === "object") {
    const name = request.tool_choice.function.name;
    if (!request.tools?.some((tool) => tool.function.name === name)) {
      throw invalidRequest(
        `tool_choice names \`${name}\`, which is not in \`tools\``,
        "tool_choice",
      );
    }
  }
  request.messages.forEach((message, index) => {
    if (message.role === "tool") {
      throw invalidRequest(
        "`tool` messages (client tool results) are not supported by this gateway",
        `messages.${index}.role`,
        "unsupported_client_tools",
      );
    }
    if (message.role === "assistant" && message.tool_calls?.length) {
      throw invalidRequest(
        "assistant `tool_calls` are not supported by this gateway",
        `messages.${index}.tool_calls`,
        "unsupported_client_tools",
      );
    }
  });
}

/** image_url parts are taken from the latest user message (workers/openai/images.ts). */
function hasImage(message: ChatMessage): boolean {
  return (
    Array.isArray(message.content) && message.content.some((part) => part.type === "image_url")
  );
}

function speaker(message: ChatMessage): string {
  return message.role === "assistant" ? "Assistant" : "User";
}

function textOf(message: ChatMessage): string {
  const content = message.content;
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((part): part is Extract<ContentPart, { type: "text" }> => part.type === "text")
    .map((part) => part.text)
    .join("\n");
}
