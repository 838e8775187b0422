import type { ToolSpec } from "../../functions/agent/types.ts";
import { invalidRequest } from "./errors.ts";
import { composeInboundText } from "./prompt.ts";
import type {
  ResponsesContentPart,
  ResponsesInputItem,
  ResponsesMessageItem,
  ResponsesRequest,
} from "./responses-schema.ts";

/**
 * Turns a /v1/responses `input` into what the session takes, by OpenClaw's rules: `instructions`
 * and system/developer messages are the caller's instructions; the newest user message is the
 * message to answer (its input_image parts are its images); earlier user/assistant messages are
 * context, passed only to a session that has no transcript of its own (none is continued);
 * function_call_output items are the results of the previous response's function calls.
 * reasoning, item_reference and echoed function_call items are accepted and not prompted.
 */

export interface ResponsesInput {
  text: string;
  images: Array<{ url: string; param: string }>;
  toolOutputs: Array<{ callId: string; output: string }>;
}

export function readResponsesInput(
  request: ResponsesRequest,
  freshSession: boolean,
): ResponsesInput {
  const items: ResponsesInputItem[] =
    typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  const toolOutputs: ResponsesInput["toolOutputs"] = [];
  const instructions = request.instructions?.trim() ? [request.instructions] : [];
  let lastUser = -1;
  items.forEach((item, index) => {
    if (item.type === "function_call_output") {
      toolOutputs.push({ callId: item.call_id, output: outputText(item.output, index) });
    } else if (isMessage(item) && item.role === "user") {
      lastUser = index;
    }
  });
  for (const [index, item] of items.entries()) {
    if (!isMessage(item)) continue;
    rejectFiles(item.content, index);
    if (item.role === "system" || item.role === "developer") {
      const text = textOf(item.content);
      if (text.trim()) instructions.push(text);
    }
  }
  if (lastUser < 0) {
    if (!toolOutputs.length)
      throw invalidRequest(
        "`input` must contain a user message or function_call_output items",
        "input",
        "missing_user_message",
      );
    return { text: "", images: [], toolOutputs };
  }
  const current = items[lastUser] as ResponsesMessageItem;
  const images = imagesOf(current.content, lastUser, typeof request.input === "string");
  const currentText = textOf(current.content);
  if (!currentText.trim() && !images.length)
    throw invalidRequest("The last user message has no text", `input.${lastUser}.content`);
  const history = freshSession
    ? items.slice(0, lastUser).flatMap((item) => {
        if (!isMessage(item) || (item.role !== "user" && item.role !== "assistant")) return [];
        const text = textOf(item.content);
        return text.trim() ? [`${item.role === "user" ? "User" : "Assistant"}: ${text}`] : [];
      })
    : [];
  return { text: composeInboundText(instructions, history, currentText), images, toolOutputs };
}

/** The caller's function tools as the model sees them (a missing schema takes no arguments). */
export function clientToolSpecs(request: ResponsesRequest): ToolSpec[] | undefined {
  if (!request.tools?.length || request.tool_choice === "none") return undefined;
  const names = new Set<string>();
  return request.tools.map((tool, index) => {
    if (names.has(tool.name))
      throw invalidRequest(`Two tools are named \`${tool.name}\``, `tools.${index}.name`);
    names.add(tool.name);
    const parameters = (tool.parameters ?? { type: "object" }) as Record<string, unknown>;
    return {
      name: tool.name,
      description: tool.description ?? "",
      parameters: { properties: {}, ...parameters, type: "object" },
    };
  });
}

type Content = string | ResponsesContentPart[];

function isMessage(item: ResponsesInputItem): item is ResponsesMessageItem {
  return (item.type === undefined || item.type === "message") && "role" in item;
}

function textOf(content: Content): string {
  if (typeof content === "string") return content;
  return content
    .map((part) =>
      part.type === "input_text" || part.type === "output_text"
        ? part.text
        : part.type === "refusal"
          ? part.refusal
          : "",
    )
    .filter((text) => text !== "")
    .join("\n");
}

function outputText(output: string | Array<{ type: string; text?: unknown }>, index: number) {
  if (typeof output === "string") return output;
  return output
    .map((part, partIndex) => {
      if (part.type === "input_text") return String(part.text ?? "");
      throw invalidRequest(
        "function_call_output takes text only on this gateway",
        `input.${index}.output.${partIndex}`,
        "unsupported_content",
      );
    })
    .join("\n");
}

function rejectFiles(content: Content, index: number): void {
  if (typeof content === "string") return;
  const file = content.findIndex((part) => part.type === "input_file");
  if (file >= 0)
    throw invalidRequest(
      "input_file parts are not supported by this gateway",
      `input.${index}.content.${file}`,
      "unsupported_content",
    );
}

/** input_image parts as data: URLs; a URL or file id is refused (no image is fetched). */
function imagesOf(
  content: Content,
  index: number,
  fromString: boolean,
): Array<{ url: string; param: string }> {
  if (typeof content === "string" || fromString) return [];
  return content.flatMap((part, partIndex) => {
    if (part.type !== "input_image") return [];
    const param = `input.${index}.content.${partIndex}`;
    const source = part.source;
    const url =
      source?.type === "base64"
        ? `data:${source.media_type};base64,${source.data}`
        : source?.type === "url"
          ? source.url
          : part.image_url;
    if (!url)
      throw invalidRequest(
        "input_image needs image_url (a base64 data: URL); file ids are not supported",
        param,
        "unsupported_content",
      );
    return [{ url, param }];
  });
}
