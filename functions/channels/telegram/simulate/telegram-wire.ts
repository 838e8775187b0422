import { createHash } from "node:crypto";
import { formOrJsonArgs } from "../../../../scripts/simulate/fakes/form-args.ts";
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
  const args: Record<string, unknown> = formOrJsonArgs(
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
