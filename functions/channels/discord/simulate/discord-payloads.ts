import { createHash } from "node:crypto";
import { parseMultipart } from "../../../../scripts/simulate/fakes/kit.ts";
import { type FakeAttachment, type FakeMessage, nextSnowflake } from "./discord-records.ts";

/** The payloads the fake Discord reads and answers: request bodies, content checks, messages. */

/**
 * A JSON body, or a multipart upload's `payload_json` with its `files[n]` matched to
 * `attachments[].id`. Throws a SyntaxError on bad JSON and an Error when a file part and its
 * attachment entry do not pair up (the caller answers 400 50109 or 50035).
 */
export async function readBody(
  contentType: string | undefined,
  raw: string,
  bytes: Buffer,
): Promise<{ body: Record<string, unknown>; attachments?: FakeAttachment[] }> {
  const upload = await parseMultipart(contentType, bytes);
  const body = upload
    ? (JSON.parse(upload.fields.payload_json ?? "{}") as Record<string, unknown>)
    : raw
      ? (JSON.parse(raw) as Record<string, unknown>)
      : {};
  if (!upload) return { body };
  const declared = (body.attachments ?? []) as Array<{
    id?: number | string;
    filename?: string;
  }>;
  const attachments = upload.files.map((file) => {
    const id = /^files\[(\d+)\]$/.exec(file.field)?.[1];
    const entry = declared.find((a) => String(a.id) === id);
    if (!entry) throw new Error(`no attachment for ${file.field}`);
    return {
      id: nextSnowflake(),
      filename: entry.filename ?? file.name,
      size: file.bytes.byteLength,
      content_type: file.type,
      sha256: createHash("sha256").update(file.bytes).digest("hex"),
    };
  });
  if (declared.length !== attachments.length) throw new Error("attachments without files");
  return { body, attachments };
}

export function checkContent(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const content = typeof body.content === "string" ? body.content : "";
  if (!content.trim()) return { message: "Cannot send an empty message", code: 50006 };
  if ([...content].length > 2000)
    return {
      message: "Invalid Form Body",
      code: 50035,
      errors: {
        content: {
          _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }],
        },
      },
    };
  return undefined;
}

export function publicMessage(message: FakeMessage) {
  const {
    edits: _edits,
    at: _at,
    deleted: _deleted,
    interaction: _interaction,
    ...visible
  } = message;
  return visible;
}
