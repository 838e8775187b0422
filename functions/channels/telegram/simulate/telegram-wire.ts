import { createHash } from "node:crypto";
import type { UploadedFile } from "../../../../scripts/simulate/fakes/kit.ts";

/** Telegram's tokens and request bodies, as the fake reads them. */

export function validToken(token: string): boolean {
  return /^\d{1,20}:[\w-]{1,100}$/.test(token) && !token.endsWith("invalid");
}

/** A multipart upload's fields (nested values as JSON, like a form) and its files by field name. */
export function uploadArgs(upload: {
  fields: Record<string, string>;
  files: UploadedFile[];
}): Record<string, unknown> {
  const args: Record<string, unknown> = parseArgs(
    new URLSearchParams(upload.fields).toString(),
    undefined,
  );
  for (const file of upload.files)
    args[file.field] = {
      name: file.name,
      type: file.type,
      size: file.bytes.byteLength,
      sha256: createHash("sha256").update(file.bytes).digest("hex"),
    };
  return args;
}

export function parseArgs(body: string, contentType: string | undefined): Record<string, unknown> {
  if (!body) return {};
  if ((contentType ?? "").includes("application/json"))
    return JSON.parse(body) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    // Form-encoded calls carry nested values (reply_parameters, allowed_updates) as JSON strings.
    try {
      args[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
    } catch {
      args[key] = value;
    }
  }
  return args;
}
