import type { ChannelCursors } from "./cursors.ts";
import { MattermostAuthError, type MattermostRest } from "./rest.ts";

/**
 * What the Mattermost connector knows of a channel that its edit and reaction events do not say:
 * the channel's type and team, learnt from its posted events or from `GET /channels/{id}` once, and
 * kept (bounded) for the connection's life. Apart from the connector (connector.ts), which reads the
 * socket and forwards events in order, because this is a cache with its own bound and its own REST
 * fallback.
 */

/** What the connector knows of a channel that its edit and reaction events do not say. */
export interface ChannelFacts {
  type?: string;
  teamId?: string;
}

export class ChannelFactsCache {
  private readonly facts = new Map<string, ChannelFacts>();

  get(channelId: string): ChannelFacts | undefined {
    return this.facts.get(channelId);
  }

  /**
   * The type (D/G/O/P) and team ("" for DMs and group messages) of the channel an edit or reaction
   * happened in: known from its posts (the cursors keep types across restarts, posted events name the
   * team), else `GET /channels/{id}` once.
   */
  async lookup(
    rest: MattermostRest,
    cursors: ChannelCursors,
    channelId: string,
    signal: AbortSignal,
  ): Promise<ChannelFacts> {
    const known = { ...this.facts.get(channelId) };
    known.type ??= cursors.typeOf(channelId);
    if (known.type !== undefined && known.teamId !== undefined) return known;
    try {
      const channel = await rest.get<{ type?: unknown; team_id?: unknown }>(
        `/channels/${encodeURIComponent(channelId)}`,
        signal,
      );
      const facts: ChannelFacts = {
        ...(typeof channel.type === "string" ? { type: channel.type } : {}),
        ...(typeof channel.team_id === "string" ? { teamId: channel.team_id } : {}),
      };
      this.remember(channelId, facts);
      return { ...known, ...facts };
    } catch (error) {
      if (error instanceof MattermostAuthError) throw error;
    }
    // Without a type the Worker drops the event (fail closed); without a team it judges it teamless.
    return known;
  }

  remember(channelId: string, facts: ChannelFacts): void {
    if (this.facts.size > 1000) this.facts.clear();
    this.facts.set(channelId, { ...this.facts.get(channelId), ...facts });
  }
}
