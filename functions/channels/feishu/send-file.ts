import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import { callFeishuApi, sendResultFromAnswer } from "./api.ts";
import type { FeishuAccount } from "./config.ts";
import { feishuSendUuid, feishuTarget, postFeishuMessage } from "./messages.ts";

/** Feishu's upload bound for one file (im/v1/files: 30 MB; images 10 MB). */
export const FEISHU_FILE_MAX_BYTES = 30 * 1024 * 1024;
const FEISHU_IMAGE_MAX_BYTES = 10 * 1024 * 1024;

/**
 * One file out to Feishu (IM v1): the bytes are uploaded first — an image (PNG, JPEG, GIF, WebP
 * within 10 MB) to `POST open-apis/im/v1/images` (`image_type: message`) for its `image_key`, any
 * other file to `POST open-apis/im/v1/files` (`file_type`: opus, mp4, pdf or stream; `file_name`)
 * for its `file_key` — then sent as an `image`, `audio` or `file` message through the same
 * reply-or-send call and `uuid` as a text chunk. An upload alone shows nothing, and Feishu sends one
 * message per uuid within the hour, so a repeat after a lost answer is harmless (idempotentSends).
 */
export async function sendFeishuFile(
  message: OutboundFileMessage,
  bytes: Uint8Array,
  ctx: SendContext<FeishuAccount>,
): Promise<SendResult> {
  const target = feishuTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.feishu is not configured" };
  if (!target.credentials)
    return {
      ok: false,
      retryable: false,
      error: `no Feishu appId/appSecret for account ${message.route.accountId}`,
    };
  const sender = { account: target.account, credentials: target.credentials };
  const { mimeType, name } = message.file;
  const blob = new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mimeType });
  const image =
    /^image\/(png|jpeg|gif|webp)$/.test(mimeType) && bytes.byteLength <= FEISHU_IMAGE_MAX_BYTES;
  const form = new FormData();
  if (image) {
    form.set("image_type", "message");
    form.set("image", blob, name);
  } else {
    form.set("file_type", fileType(mimeType));
    form.set("file_name", name);
    form.set("file", blob, name);
  }
  const uploaded = await callFeishuApi(
    sender.account,
    sender.credentials,
    "POST",
    image ? "open-apis/im/v1/images" : "open-apis/im/v1/files",
    form,
    ctx.signal,
  );
  if (!uploaded.ok) return sendResultFromAnswer(uploaded, "upload");
  const data = (uploaded.data ?? {}) as { image_key?: unknown; file_key?: unknown };
  const key = image ? data.image_key : data.file_key;
  if (typeof key !== "string" || !key)
    return { ok: false, retryable: true, error: "feishu upload answered no key" };
  const body = image
    ? { msg_type: "image", content: JSON.stringify({ image_key: key }) }
    : {
        msg_type: fileType(mimeType) === "opus" ? "audio" : "file",
        content: JSON.stringify({ file_key: key }),
      };
  const uuid = await feishuSendUuid(message.route.accountId, message.route.to, message.id);
  return postFeishuMessage(sender, message.route, message.chunkIndex, body, uuid, ctx.signal);
}

function fileType(mimeType: string): "opus" | "mp4" | "pdf" | "stream" {
  if (mimeType === "audio/ogg") return "opus";
  if (mimeType === "audio/mp4" || mimeType === "video/mp4") return "mp4";
  if (mimeType === "application/pdf") return "pdf";
  return "stream";
}
