/**
 * What the connector learns from the Gateway that a single message does not say: whether a channel
 * is a thread and which channel it belongs to (GUILD_CREATE's channels/threads, CHANNEL_*, THREAD_*),
 * and which role Discord manages for the bot in each guild (a role whose `tags.bot_id` is the bot),
 * so a role mention counts as a mention. Attached to each forwarded dispatch as `context`; the
 * Worker's parser reads it (functions/channels/discord/payloads.ts). Bounded: at most `maxChannels`
 * entries, oldest forgotten first.
 */

export interface ChannelFacts {
  id: string;
  type: number;
  parent_id?: string | null;
  name?: string;
}

export class GatewayContext {
  botUserId: string | undefined;
  private readonly channels = new Map<string, ChannelFacts>();
  private readonly botRoles = new Map<string, string[]>();

  constructor(private readonly maxChannels = 50_000) {}

  /** Learns from any dispatch; returns the `context` to attach when `t` is forwarded. */
  observe(t: string, d: Record<string, unknown>): void {
    switch (t) {
      case "READY":
        this.botUserId = str((d.user as Record<string, unknown> | undefined)?.id);
        return;
      case "GUILD_CREATE": {
        for (const channel of [...arr(d.channels), ...arr(d.threads)]) this.remember(channel);
        const roles = arr(d.roles).filter(
          (role) =>
            this.botUserId &&
            str((role.tags as Record<string, unknown> | undefined)?.bot_id) === this.botUserId,
        );
        const guildId = str(d.id);
        if (guildId)
          this.botRoles.set(
            guildId,
            roles.map((role) => str(role.id)).filter((id): id is string => !!id),
          );
        return;
      }
      case "CHANNEL_CREATE":
      case "CHANNEL_UPDATE":
      case "THREAD_CREATE":
      case "THREAD_UPDATE":
        this.remember(d);
        return;
      case "CHANNEL_DELETE":
      case "THREAD_DELETE": {
        const id = str(d.id);
        if (id) this.channels.delete(id);
        return;
      }
      case "THREAD_LIST_SYNC":
        for (const thread of arr(d.threads)) this.remember(thread);
        return;
      case "GUILD_ROLE_CREATE":
      case "GUILD_ROLE_UPDATE": {
        const role = d.role as Record<string, unknown> | undefined;
        const guildId = str(d.guild_id);
        if (
          guildId &&
          role &&
          this.botUserId &&
          str((role.tags as Record<string, unknown> | undefined)?.bot_id) === this.botUserId
        ) {
          const roleId = str(role.id);
          const known = this.botRoles.get(guildId) ?? [];
          if (roleId && !known.includes(roleId)) this.botRoles.set(guildId, [...known, roleId]);
        }
        return;
      }
    }
  }

  contextFor(d: Record<string, unknown>): Record<string, unknown> | undefined {
    const channelId = str(d.channel_id);
    const channel = channelId ? this.channels.get(channelId) : undefined;
    const guildId = str(d.guild_id);
    const roles = guildId ? this.botRoles.get(guildId) : undefined;
    if (!channel && !roles?.length) return undefined;
    return { ...(channel ? { channel } : {}), ...(roles?.length ? { botRoleIds: roles } : {}) };
  }

  private remember(raw: Record<string, unknown>): void {
    const id = str(raw.id);
    if (!id || typeof raw.type !== "number") return;
    this.channels.delete(id);
    this.channels.set(id, {
      id,
      type: raw.type,
      ...(raw.parent_id !== undefined ? { parent_id: str(raw.parent_id) ?? null } : {}),
      ...(typeof raw.name === "string" ? { name: raw.name } : {}),
    });
    if (this.channels.size > this.maxChannels)
      this.channels.delete(this.channels.keys().next().value as string);
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}

function arr(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value)
    ? value.filter(
        (item): item is Record<string, unknown> => typeof item === "object" && item !== null,
      )
    : [];
}
