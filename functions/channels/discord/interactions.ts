import type { AcceptResult, ParseResult, WebhookPieces, WebhookRoute } from "../channel.ts";
import { defaultWebhookAck } from "../webhook-ack.ts";
import { inboundEnvelopeSchema } from "../../core/envelope.ts";
import { logClash, webhookAccounts, webhookRoutes } from "../accounts.ts";
import {
  discordAccount,
  discordBotToken,
  discordBotUserId,
  type DiscordAccount,
  type DiscordChannelConfig,
} from "./config.ts";
import {
  discordInteractionSchema,
  GROUP_DM_CHANNEL_TYPE,
  type DiscordInteraction,
} from "./payloads.ts";
import { closedConversation } from "./parse.ts";
import { verifyDiscordSignature } from "./verify.ts";
import { parseJsonBody } from "../parse-json-body.ts";

/**
 * Discord HTTP interactions (slash commands, buttons) — the Interactions Endpoint URL, which needs no
 * socket: Discord POSTs each interaction here instead of over the Gateway. Ed25519-verified
 * (verify.ts); PING → PONG; an application command is stored, then answered with a deferred
 * response (type 5, "thinking…", ephemeral per `slashCommand.ephemeral`) within Discord's 3 s; the
 * agent's answer later edits that response and sends follow-ups through the interaction webhook
 * (send.ts). A component click (type 3) is a system event (same access policy, never a run by
 * itself), acknowledged with a deferred update (type 6). An interaction the SessionDO turns away
 * (stranger, unlisted channel, pending pairing, command not authorized) is told so once, privately
 * (ChannelAdapter.refusalRoute): otherwise Discord shows "thinking…" until the token expires.
 * Autocomplete gets no suggestions.
 * Commands run in the sender's slash session `discord:slash:<userId>` (channels/discord).
 */

/** Interactions are small; 256 KiB bounds what is read before the signature check. */
export const DISCORD_INTERACTION_MAX_BODY_BYTES = 256 * 1024;
/** An interaction token stays good for 15 minutes; a minute is kept in hand. */
const INTERACTION_TOKEN_TTL_MS = 14 * 60_000;

const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;
const AUTOCOMPLETE = 4;

export const discordInteractions: WebhookPieces<DiscordAccount, DiscordChannelConfig> = {
  routes(discord: DiscordChannelConfig): WebhookRoute<DiscordAccount>[] {
    // Only accounts with the application's public key answer interactions.
    const byPath = webhookAccounts(
      discord,
      (accountId) => discordAccount(discord, accountId),
      (account) => (account.publicKey ? account.interactionsPath : undefined),
      logClash("discord", "interactionsPath"),
    );
    return webhookRoutes("Discord interactions", byPath);
  },
  maxBodyBytes: () => DISCORD_INTERACTION_MAX_BODY_BYTES,
  verify(request, route) {
    return verifyDiscordSignature(
      request.headers,
      request.raw,
      route.account.publicKey,
      Math.floor(request.receivedAt / 1000),
    );
  },
  parse(request, route, env) {
    const interaction = parseJsonBody(
      request.raw,
      discordInteractionSchema,
      "a Discord interaction",
    );
    if (!interaction.ok) return { kind: "malformed", reason: interaction.reason };
    const token = discordBotToken(route.account, env);
    return parseInteraction(
      interaction.value,
      route.account,
      discordBotUserId(token, route.account),
      request.receivedAt,
    );
  },
  ack: interactionAck,
};

export function parseInteraction(
  interaction: DiscordInteraction,
  account: DiscordAccount,
  botUserId: string | undefined,
  receivedAt: number,
): ParseResult {
  switch (interaction.type) {
    case PING:
      return { kind: "respond", response: Response.json({ type: 1 }) };
    case AUTOCOMPLETE:
      return { kind: "respond", response: Response.json({ type: 8, data: { choices: [] } }) };
    case APPLICATION_COMMAND:
    case MESSAGE_COMPONENT:
      break;
    default:
      return {
        kind: "envelopes",
        envelopes: [],
        dropped: [`interaction type ${interaction.type} is not handled`],
        ackHint: "update",
      };
  }
  const user = interaction.member?.user ?? interaction.user;
  const channelId = interaction.channel_id ?? interaction.channel?.id;
  if (!user || !channelId)
    return { kind: "malformed", reason: "interaction names no user or channel" };
  if (botUserId && user.id === botUserId)
    return {
      kind: "envelopes",
      envelopes: [],
      dropped: ["the bot's own interaction"],
      ackHint: "update",
    };
  const isCommand = interaction.type === APPLICATION_COMMAND;
  // A click where the account takes no messages (a group DM with dm.groupEnabled off, DMs off) is
  // dropped like a message there would be, before any access check.
  const closed = isCommand
    ? undefined
    : closedConversation(
        { account },
        {
          chatType: interaction.guild_id ? "channel" : "direct",
          groupDm: interaction.channel?.type === GROUP_DM_CHANNEL_TYPE,
        },
      );
  if (closed) return { kind: "envelopes", envelopes: [], dropped: [closed], ackHint: "update" };
  const name = interaction.data?.name ?? "";
  const text = isCommand
    ? `/${name}${commandArguments(interaction.data?.options)}`.trim()
    : `Button or menu clicked: ${String((interaction.data as { custom_id?: unknown } | undefined)?.custom_id ?? "?")}`;
  const guild = interaction.guild_id;
  const thread =
    interaction.channel && [10, 11, 12].includes(interaction.channel.type)
      ? (interaction.channel.parent_id ?? undefined)
      : undefined;
  const ephemeral = account.slashCommand.ephemeral !== false;
  const envelope = inboundEnvelopeSchema.safeParse({
    dedupKey: `discord:${botUserId ? `bot${botUserId}` : `acct:${account.accountId}`}:interaction:${interaction.id}`,
    kind: isCommand ? "message" : "system",
    channel: "discord",
    accountId: account.accountId,
    chatType: guild ? "channel" : "direct",
    peerId: guild ? channelId : user.id,
    ...(thread ? { parentPeerId: thread } : {}),
    ...(guild ? { teamId: guild } : {}),
    senderId: user.id,
    senderName: interaction.member?.nick ?? user.global_name ?? user.username,
    ...(user.bot ? { senderIsBot: true } : {}),
    ...(interaction.member?.roles?.length
      ? { senderRoles: interaction.member.roles.slice(0, 250) }
      : {}),
    text: text.slice(0, 4000),
    // A slash command is addressed to the bot: it needs no @mention in a gated channel.
    wasMentioned: true,
    ...(isCommand ? { sessionScope: `discord:slash:${user.id}` } : {}),
    receivedAt,
    route: {
      channel: "discord",
      accountId: account.accountId,
      to: channelId,
      extra: {
        ...(guild ? { teamId: guild, ...(thread ? { parentPeerId: thread } : {}) } : {}),
        // The interaction's webhook: a command's answer (or refusal) edits its deferred response; a
        // click's route carries it only so a refused click can be told so, privately (send.ts).
        interactionToken: interaction.token,
        applicationId: interaction.application_id,
        interactionExpiresAt: String(receivedAt + INTERACTION_TOKEN_TTL_MS),
        ...(isCommand ? { ephemeral: ephemeral ? "1" : "0" } : { deferredUpdate: "1" }),
      },
    },
  });
  if (!envelope.success)
    return {
      kind: "malformed",
      reason: `interaction: ${envelope.error.issues[0]?.message ?? "invalid"}`,
    };
  return {
    kind: "envelopes",
    envelopes: [envelope.data],
    ackHint: isCommand ? (ephemeral ? "defer-ephemeral" : "defer") : "update",
  };
}

/** ` value value …` of a command's options, sub-commands included, in order. */
function commandArguments(
  options: Array<{ name: string; type: number; value?: unknown; options?: unknown[] }> | undefined,
): string {
  if (!options?.length) return "";
  return options
    .map((option) => {
      if (option.type === 1 || option.type === 2)
        return ` ${option.name}${commandArguments(option.options as typeof options)}`;
      return option.value === undefined ? "" : ` ${String(option.value)}`;
    })
    .join("");
}

/**
 * Stored → the interaction response: deferred channel message (5), ephemeral when configured, or a
 * deferred update (6) for a click. Not stored → 500: Discord shows the user the command failed
 * (interactions are not redelivered, so the user runs it again).
 */
export function interactionAck(result: AcceptResult): Response {
  const ack = defaultWebhookAck(result);
  if (!result.allStored) return ack;
  const body =
    result.ackHint === "defer-ephemeral"
      ? { type: 5, data: { flags: 1 << 6 } }
      : result.ackHint === "defer"
        ? { type: 5 }
        : { type: 6 };
  return Response.json(body, { headers: ack.headers });
}
