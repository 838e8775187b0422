import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import type { DiscordAccount } from "./config.ts";
import { liveInteraction } from "./interaction-webhook.ts";
import { discordRequest, sendResultFromFailure } from "./rest.ts";
import { discordTarget, nonceOf, referenceFor } from "./send.ts";

const EPHEMERAL = 1 << 6;
const ALLOWED_MENTIONS = { parse: ["users"], replied_user: false };

/**
 * One file out to Discord as a message attachment (discord.com/developers/docs/reference#uploading-files):
 * `multipart/form-data` with `payload_json` (the caption as `content`, `attachments: [{ id: 0,
 * filename }]`) and the bytes as `files[0]`. In a channel it carries the same `nonce` +
 * `enforce_nonce` as a text chunk, so a repeat within Discord's nonce window returns the message
 * already made and a later lost answer is found in the channel's history (send.ts reconcile). An
 * interaction's file goes as a follow-up on its webhook (ephemeral when the interaction is).
 */
export async function sendDiscordFile(
  message: OutboundFileMessage,
  bytes: Uint8Array,
  ctx: SendContext<DiscordAccount>,
): Promise<SendResult> {
  const { route } = message;
  const target = discordTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.discord is not configured" };
  const payload = {
    content: message.text.slice(0, 2000),
    allowed_mentions: ALLOWED_MENTIONS,
    attachments: [{ id: 0, filename: message.file.name }],
  };
  const form = (json: Record<string, unknown>) => {
    const body = new FormData();
    body.set("payload_json", JSON.stringify(json));
    body.set(
      "files[0]",
      new Blob([bytes as Uint8Array<ArrayBuffer>], { type: message.file.mimeType }),
      message.file.name,
    );
    return body;
  };
  const interaction = liveInteraction(route);
  if (interaction) {
    const sent = await discordRequest<{ id: string }>(
      { ...target.call, token: undefined },
      "POST",
      `/webhooks/${interaction.applicationId}/${interaction.token}?wait=true`,
      form({ ...payload, ...(interaction.ephemeral ? { flags: EPHEMERAL } : {}) }),
    );
    return sent.ok ? { ok: true, platformMessageId: sent.result.id } : sendResultFromFailure(sent);
  }
  if (!target.token)
    return {
      ok: false,
      retryable: false,
      error: `no Discord bot token for account ${route.accountId}`,
    };
  const sent = await discordRequest<{ id: string }>(
    target.call,
    "POST",
    `/channels/${route.to}/messages`,
    form({
      ...payload,
      nonce: await nonceOf(message),
      enforce_nonce: true,
      ...referenceFor(route, target.account, 0),
    }),
  );
  return sent.ok ? { ok: true, platformMessageId: sent.result.id } : sendResultFromFailure(sent);
}
