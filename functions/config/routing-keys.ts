import * as z from "zod";
import { allowListSchema } from "./channel-access.ts";

/**
 * The config keys routing and commands read (functions/routing/, functions/commands/), part of the
 * base schema (schema.ts): `bindings`, `commands`, `accessGroups`, `messages.groupChat`. Names and defaults are OpenClaw's
 * (concepts/agent-bindings, tools/slash-commands, channels/access-groups, channels/groups).
 */

export const peerKindSchema = z.enum(["direct", "group", "channel"]);

export const bindingSchema = z
  .object({
    agentId: z.string().min(1),
    comment: z.string().optional(),
    /** `"acp"` bindings pin ACP sessions; this gateway routes only `"route"` (the default) bindings. */
    type: z.enum(["route", "acp"]).default("route"),
    match: z
      .object({
        channel: z.string().min(1),
        /** Omitted = the channel's default account only; `"*"` = every account of the channel. */
        accountId: z.string().min(1).optional(),
        peer: z.object({ kind: peerKindSchema, id: z.string().min(1) }).optional(),
        guildId: z.string().min(1).optional(),
        teamId: z.string().min(1).optional(),
        roles: z.array(z.string().min(1)).min(1).optional(),
      })
      .strict()
      .refine((match) => !match.roles || match.guildId, {
        message: "roles needs guildId",
        path: ["roles"],
      }),
    session: z
      .object({
        dmScope: z
          .enum(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"])
          .optional(),
      })
      .optional(),
  })
  .loose();
export type Binding = z.infer<typeof bindingSchema>;
export const bindingsSchema = z.array(bindingSchema).default([]);

/**
 * `commands.*`. `allowFrom` (per provider, `"*"` = every provider) is the ONLY source of command
 * authorization when set; `ownerAllowFrom` names the owner (`"<channel>:<senderId>"` entries).
 */
export const commandsSchema = z
  .object({
    text: z.boolean().default(true),
    native: z.union([z.boolean(), z.literal("auto")]).default("auto"),
    config: z.boolean().default(false),
    debug: z.boolean().default(false),
    restart: z.boolean().default(true),
    ownerAllowFrom: allowListSchema.default([]),
    allowFrom: z.record(z.string(), allowListSchema).optional(),
  })
  .loose()
  .prefault({});
export type CommandsConfig = z.infer<typeof commandsSchema>;

/** `accessGroups.<name>`: static sender groups referenced as `accessGroup:<name>` in allowlists. */
export const accessGroupSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("message.senders"),
    /** Keyed by channel id; `"*"` entries are checked for every channel. */
    members: z.record(z.string(), allowListSchema).default({}),
  }),
  // Resolved against Discord at authorization time in OpenClaw; this gateway cannot, so it admits nobody.
  z.object({ type: z.literal("discord.channelAudience") }).loose(),
]);
export type AccessGroup = z.infer<typeof accessGroupSchema>;
export const accessGroupsSchema = z.record(z.string(), accessGroupSchema).default({});

/** `messages.groupChat`: group history window and the regex mention fallback. */
export const groupChatSchema = z
  .object({
    historyLimit: z.number().int().nonnegative().default(50),
    mentionPatterns: z.array(z.string()).optional(),
    unmentionedInbound: z.enum(["user_request", "room_event"]).default("user_request"),
    visibleReplies: z.enum(["automatic", "message_tool"]).optional(),
  })
  .loose()
  .prefault({});
