import * as z from "zod";
import { sameSecret } from "../../http/same-secret.ts";
import type {
  AcceptResult,
  ParseResult,
  VerifyResult,
  WebhookPieces,
  WebhookRequest,
  WebhookRoute,
} from "../channel.ts";
import { logClash, webhookAccounts, webhookRoutes } from "../accounts.ts";
import { inboundEnvelopeSchema, type ChatType } from "../../core/envelope.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import { mattermostCommandRegistry, type MattermostCommandRecord } from "./command-registry.ts";
import {
  mattermostAccount,
  mattermostNativeCommands,
  type MattermostAccount,
  type MattermostChannelConfig,
} from "./config.ts";
import { NATIVE_TRIGGER_PREFIX } from "./native-commands.ts";

/**
 * The callback of Mattermost's native slash commands (`commands.native: true`): Mattermost POSTs a
 * form (`application/x-www-form-urlencoded`) to `commands.callbackPath` each time a user runs one
 * of the `oc_*` commands the Worker registered (native-commands.ts).
 *
 * Verify fails closed: the form's `token` must equal, in constant time, the token Mattermost issued
 * for exactly that team's trigger when it was registered (the channel-state object, command-registry.ts). An unknown trigger, a
 * team with no registration, no registration at all, or the token of another command → 401,
 * nothing stored. Re-running the registration replaces the set, so a command deleted or re-created
 * since stops verifying.
 *
 * A verified command becomes an ordinary message in the conversation it was typed in (`/oc_status
 * x` → `/status x`), under the same access policy as a post there (pairing, allowlists, groups),
 * deduplicated by Mattermost's `trigger_id`, so a replayed callback answers nothing twice. The
 * callback itself is answered at once with an ephemeral "Processing…"; the real answer is a normal
 * post from the session's outbox.
 */

/** A command form is small; 64 KiB bounds what is read before the token check. */
export const MATTERMOST_COMMAND_MAX_BODY_BYTES = 64 * 1024;

const commandFormSchema = z
  .object({
    token: z.string().min(1).max(256),
    team_id: z.string().min(1).max(64),
    channel_id: z.string().min(1).max(64),
    channel_name: z.string().max(200).default(""),
    user_id: z.string().min(1).max(64),
    user_name: z.string().max(100).optional(),
    command: z.string().regex(/^\/[A-Za-z0-9_.-]{1,64}$/),
    text: z.string().max(16_383).default(""),
    trigger_id: z.string().min(1).max(512),
    root_id: z.string().max(64).optional(),
  })
  .loose();
type CommandForm = z.infer<typeof commandFormSchema>;

/** The registration each verified body matched, so parse does not look it up twice (same raw bytes object). */
const verifiedRecords = new WeakMap<Uint8Array, MattermostCommandRecord>();

export const mattermostCommandCallback: WebhookPieces<MattermostAccount, MattermostChannelConfig> =
  {
    routes(root: MattermostChannelConfig) {
      const byPath = webhookAccounts(
        root,
        (accountId) => mattermostAccount(root, accountId),
        (account) =>
          mattermostNativeCommands(account) ? account.commands.callbackPath : undefined,
        logClash("mattermost", "commands.callbackPath"),
      );
      return webhookRoutes("Mattermost slash commands", byPath);
    },
    maxBodyBytes: () => MATTERMOST_COMMAND_MAX_BODY_BYTES,
    verify: verifyCommandCallback,
    parse(request, route) {
      const form = readForm(request.raw);
      if (!form.success)
        return {
          kind: "malformed",
          reason: `not a Mattermost command callback: ${form.error.issues[0]?.path.join(".") ?? "?"}`,
        };
      const record = verifiedRecords.get(request.raw);
      // verify ran on these very bytes; without its record there is nothing to trust (fail closed).
      if (!record) return { kind: "malformed", reason: "command was not verified" };
      return envelopeFromCommand(form.data, record, route.account, request.receivedAt);
    },
    ack: commandAck,
  };

async function verifyCommandCallback(
  request: WebhookRequest,
  route: WebhookRoute<MattermostAccount>,
  env: Record<string, unknown>,
): Promise<VerifyResult> {
  const form = readForm(request.raw);
  if (!form.success) return { ok: false, status: 401, reason: "no command token" };
  const trigger = form.data.command.slice(1).toLowerCase();
  if (!trigger.startsWith(NATIVE_TRIGGER_PREFIX))
    return { ok: false, status: 401, reason: "invalid command token" };
  const registry = mattermostCommandRegistry(env, route.accountId);
  if (!registry) return { ok: false, reason: "no-secret" };
  let record: MattermostCommandRecord | null;
  try {
    record = await registry.find(form.data.team_id, trigger);
  } catch (error) {
    console.error(
      `channels.mattermost (${route.label}): command registry unreachable`,
      error instanceof Error ? error.message : error,
    );
    return { ok: false, status: 503, reason: "command registry unavailable" };
  }
  // The same answer for "no such registration" and "wrong token": a prober learns nothing.
  if (!record || !(await sameSecret(form.data.token, record.token)))
    return { ok: false, status: 401, reason: "invalid command token" };
  verifiedRecords.set(request.raw, record);
  return { ok: true };
}

function readForm(raw: Uint8Array) {
  const params = new URLSearchParams(new TextDecoder().decode(raw));
  return commandFormSchema.safeParse(Object.fromEntries(params));
}

function envelopeFromCommand(
  form: CommandForm,
  record: MattermostCommandRecord,
  account: MattermostAccount,
  receivedAt: number,
): ParseResult {
  const chatType = chatTypeOfCommand(form, record.botUserId);
  const name = record.trigger.slice(NATIVE_TRIGGER_PREFIX.length);
  const threadId = chatType !== "direct" && form.root_id ? form.root_id : undefined;
  const envelope = inboundEnvelopeSchema.safeParse({
    dedupKey: `mattermost:${account.accountId}:command:${form.trigger_id}`,
    kind: "message",
    channel: "mattermost",
    accountId: account.accountId,
    chatType,
    peerId: chatType === "direct" ? form.user_id : form.channel_id,
    ...(threadId ? { parentPeerId: form.channel_id, threadId } : {}),
    teamId: form.team_id,
    senderId: form.user_id,
    ...(form.user_name ? { senderName: form.user_name } : {}),
    text: `/${name} ${form.text.trim()}`.trim(),
    // A slash command is addressed to the bot: it needs no @-mention in a gated channel.
    wasMentioned: true,
    receivedAt,
    route: {
      channel: "mattermost",
      accountId: account.accountId,
      to: form.channel_id,
      ...(threadId ? { threadId } : {}),
      extra: { chatType, mentioned: "1", botUserId: record.botUserId },
    },
  });
  if (!envelope.success)
    return {
      kind: "malformed",
      reason: `command: ${envelope.error.issues[0]?.message ?? "invalid"}`,
    };
  return { kind: "envelopes", envelopes: [envelope.data] };
}

/**
 * The callback does not say what kind of channel it came from; its name does. A direct channel is
 * named `<userId>__<userId>` (the two ids sorted) — here the bot and the sender exactly, which
 * Mattermost refuses as the name of any other channel; a group message is named by a 40-hex hash.
 * Anything else is a channel, which is the stricter policy (groupPolicy) when in doubt.
 */
function chatTypeOfCommand(form: CommandForm, botUserId: string): ChatType {
  if (form.channel_name === [botUserId, form.user_id].sort().join("__")) return "direct";
  if (/^[a-f0-9]{40}$/.test(form.channel_name)) return "group";
  return "channel";
}

/** Stored → the ephemeral "Processing…" Mattermost shows only to the user; not stored → 500 (the user sees the command failed and runs it again). */
function commandAck(result: AcceptResult): Response {
  const ack = defaultWebhookAck(result);
  if (!result.allStored) return ack;
  return Response.json(
    { response_type: "ephemeral", text: "Processing…" },
    { headers: ack.headers },
  );
}
