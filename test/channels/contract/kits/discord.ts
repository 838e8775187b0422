import { messageCreate, signInteraction, snowflake, TEST_DISCORD } from "../../discord/helpers.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/**
 * Discord for the system-event cross-check: Gateway dispatches as the companion forwards them
 * (signed POST /internal/companion/events with key k1) and component clicks on the interactions
 * endpoint (Ed25519). The suite's guild admits the owner and `allowed` users, `rolesChannel`
 * also holders of `role`; DMs pair; group DMs are off (dm.groupEnabled, the default).
 */

const COMPANION_KEY = { id: "k1", secret: "test-companion-secret" };
const GROUP_DM = 3;

function gateway(
  dispatch: { t: string; d: Record<string, unknown> } & Record<string, unknown>,
): Delivery {
  return {
    via: "companion",
    key: COMPANION_KEY,
    channel: "discord",
    accountId: "default",
    eventId: `${dispatch.t}:${snowflake()}`,
    payload: dispatch,
  };
}

async function click(interaction: Record<string, unknown>): Promise<Delivery> {
  const body = JSON.stringify(interaction);
  return {
    via: "webhook",
    request: {
      path: "/discord/interactions",
      headers: { "content-type": "application/json", ...(await signInteraction(body)) },
      body,
    },
  };
}

/** Where a Discord event happens: a guild channel (with the sender's roles there), a DM, or a group DM. */
interface DiscordPlace {
  channelId: string;
  guildId?: string;
  roles?: string[];
  /** What the connector knows of the channel (a group DM's type), sent as dispatch `context`. */
  channelType?: number;
}

function discordConversation(
  name: string,
  place: (sender: string) => DiscordPlace,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const context = (where: DiscordPlace) =>
    where.channelType === undefined
      ? {}
      : { context: { channel: { id: where.channelId, type: where.channelType } } };
  const member = (where: DiscordPlace) =>
    where.guildId ? { member: { nick: null, roles: where.roles ?? [] } } : {};
  return {
    name,
    ...senders,
    message: async (sender) => {
      const where = place(sender);
      const dispatch = messageCreate({
        author: sender,
        channelId: where.channelId,
        ...(where.guildId ? { guildId: where.guildId } : {}),
        ...(where.roles ? { roles: where.roles } : {}),
        content: "an ordinary message",
        ...(where.channelType !== undefined ? { channelContext: { type: where.channelType } } : {}),
      });
      return gateway(dispatch);
    },
    events: {
      MESSAGE_UPDATE: async (sender) => {
        const where = place(sender);
        return gateway({
          op: 0,
          t: "MESSAGE_UPDATE",
          s: 2,
          d: {
            id: snowflake(),
            channel_id: where.channelId,
            ...(where.guildId ? { guild_id: where.guildId } : {}),
            ...member(where),
            author: { id: sender, username: "someone" },
            content: `edited ${snowflake()}`,
            edited_timestamp: new Date().toISOString(),
          },
          ...context(where),
        });
      },
      MESSAGE_REACTION_ADD: async (sender) => {
        const where = place(sender);
        return gateway({
          op: 0,
          t: "MESSAGE_REACTION_ADD",
          s: 3,
          d: {
            user_id: sender,
            channel_id: where.channelId,
            message_id: snowflake(),
            ...(where.guildId
              ? {
                  guild_id: where.guildId,
                  member: { user: { id: sender, username: "someone" }, roles: where.roles ?? [] },
                }
              : {}),
            message_author_id: TEST_DISCORD.botId,
            emoji: { id: null, name: "👍" },
          },
          ...context(where),
        });
      },
      MESSAGE_COMPONENT: (sender) => {
        const where = place(sender);
        const user = { id: sender, username: "someone", global_name: "Someone" };
        return click({
          id: snowflake(),
          application_id: TEST_DISCORD.applicationId,
          type: 3,
          token: `token-${snowflake()}`,
          channel_id: where.channelId,
          channel: { id: where.channelId, type: where.channelType ?? (where.guildId ? 0 : 1) },
          ...(where.guildId
            ? { guild_id: where.guildId, member: { user, nick: null, roles: where.roles ?? [] } }
            : { user }),
          data: { custom_id: `approve-${snowflake()}`, component_type: 2 },
          message: { id: snowflake() },
        });
      },
    },
  };
}

const guildChannel = (channelId: string) => () => ({ channelId, guildId: TEST_DISCORD.guild });
const ROLE_HOLDER = snowflake();
const GROUP_DM_CHANNEL = snowflake();

export const discordSystemKit: SystemEventKit = {
  channel: "discord",
  kinds: ["MESSAGE_UPDATE", "MESSAGE_REACTION_ADD", "GUILD_MEMBER_ADD", "MESSAGE_COMPONENT"],
  conversations: [
    discordConversation("a DM (dmPolicy pairing)", () => ({ channelId: snowflake() }), {
      allowed: TEST_DISCORD.allowed.at(-1)!,
      refused: snowflake(),
    }),
    discordConversation(
      "a guild channel (the guild's users)",
      guildChannel(TEST_DISCORD.openChannel),
      {
        allowed: TEST_DISCORD.owner,
        refused: snowflake(),
      },
    ),
    discordConversation(
      "a guild channel open to a role",
      (sender) => ({
        channelId: TEST_DISCORD.rolesChannel,
        guildId: TEST_DISCORD.guild,
        roles: sender === ROLE_HOLDER ? [TEST_DISCORD.role] : [],
      }),
      { allowed: ROLE_HOLDER, refused: snowflake() },
    ),
    discordConversation(
      "an unlisted channel of the guild",
      guildChannel(TEST_DISCORD.otherChannel),
      {
        refused: TEST_DISCORD.owner,
      },
    ),
    discordConversation(
      "a group DM (dm.groupEnabled off, the default)",
      () => ({ channelId: GROUP_DM_CHANNEL, channelType: GROUP_DM }),
      { refused: TEST_DISCORD.owner },
    ),
    {
      // A join belongs to the guild itself: judged by the guild's own entry, as a message in the
      // channel that shares the guild's id is.
      name: "the guild itself",
      allowed: TEST_DISCORD.owner,
      refused: snowflake(),
      message: async (sender) =>
        gateway(
          messageCreate({
            author: sender,
            channelId: TEST_DISCORD.guild,
            guildId: TEST_DISCORD.guild,
            content: "an ordinary message",
          }),
        ),
      events: {
        GUILD_MEMBER_ADD: async (sender) =>
          gateway({
            op: 0,
            t: "GUILD_MEMBER_ADD",
            s: 4,
            d: {
              guild_id: TEST_DISCORD.guild,
              user: { id: sender, username: "newbie" },
              joined_at: new Date().toISOString(),
            },
          }),
      },
    },
  ],
};
