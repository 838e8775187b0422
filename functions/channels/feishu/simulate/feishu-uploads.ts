import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import type { UploadedFile } from "../../../../scripts/simulate/fakes/kit.ts";
import { answer, type FeishuFakeState, invalidToken } from "./feishu-state.ts";

/** The upload paths: POST /open-apis/im/v1/files and /open-apis/im/v1/images. */
export const UPLOAD_PATH = /^\/open-apis\/im\/v1\/(files|images)$/;

/**
 * im/v1/files (multipart file_type, file_name, file; ≤ 30 MB) → {file_key} and im/v1/images
 * (multipart image_type=message, image; ≤ 10 MB) → {image_key}: the fake keeps each file's name,
 * size and SHA-256 under its key, for the message that names it.
 */
export function uploadApi(
  state: FeishuFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  upload: { fields: Record<string, string>; files: UploadedFile[] },
) {
  const image = url.pathname.endsWith("/images");
  const call = state.record(image ? "image-upload" : "file-upload", undefined, upload.fields, "");
  if (!state.authorized(req)) return invalidToken(res, call);
  const file = upload.files.find((f) => f.field === (image ? "image" : "file"));
  if (!file?.bytes.byteLength) return answer(res, call, 400, 234001, {}, "Invalid request param.");
  if (
    image
      ? upload.fields.image_type !== "message"
      : !upload.fields.file_type || !upload.fields.file_name
  )
    return answer(res, call, 400, 234001, {}, "Invalid request param.");
  if (file.bytes.byteLength > (image ? 10 : 30) * 1024 * 1024)
    return answer(res, call, 400, 234006, {}, "The file size exceed the max value.");
  const key = `${image ? "img" : "file"}_v3_${randomBytes(8).toString("hex")}`;
  state.uploads.set(key, {
    name: image ? file.name : upload.fields.file_name!,
    type: image ? "image" : upload.fields.file_type!,
    size: file.bytes.byteLength,
    sha256: createHash("sha256").update(file.bytes).digest("hex"),
  });
  return answer(res, call, 200, 0, image ? { image_key: key } : { file_key: key });
}
