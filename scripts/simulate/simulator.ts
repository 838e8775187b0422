/**
 * A channel's simulator: what `npm run dev` with EDGECLAW_SIMULATE=1 and `npx edgeclaw simulate
 * <channel>` need to play the platform for it, with no account. It lives in the channel's folder,
 * `functions/channels/<id>/simulate/simulator.ts` (exporting `simulator`), beside the channel's
 * fake platform; scripts/simulate/registry.ts finds it there for every channel the registry serves.
 * Node only: it may use node: modules and the shared fake kit in scripts/simulate/fakes/ (never
 * test/: the shipped CLI does not import tests); the Worker never imports it.
 */

/** What `simulate <channel> [--from <id>] [--group <id>] [--thread <id>] "text"` asks for. */
export interface SimulatedMessage {
  /** The sender's platform id (`--from`); the simulator's default when absent. */
  from?: string;
  /** A group / channel / chat id (`--group`); absent = a direct message. */
  group?: string;
  /** A thread / topic within the conversation (`--thread`). */
  thread?: string;
  text: string;
}

export interface RunningFake {
  /** Base URL of the fake platform API on loopback. */
  url: string;
  stop(): Promise<void>;
}

/** The channel block the simulated stack runs with, and the secrets the simulated platform signs with. */
export interface PreparedChannel {
  /** The user's `channels.<id>` block with every platform API base URL (every account) pointed at the fake. */
  block: Record<string, unknown>;
  /** Variables to add to the Worker's env: generated test secrets the block's SecretRefs / env fallbacks now find. */
  env: Record<string, string>;
  /** What `webhook` signs with (e.g. { signingSecret }), for the default account. Fake values; kept in the dev data dir while dev runs. */
  secrets: Record<string, string>;
  /**
   * Variables for the companion dev starts, where its connector finds the fake by its own
   * environment rather than by the config (WhatsApp: Baileys' socket replaced by a loopback one).
   */
  companionEnv?: Record<string, string>;
}

export interface ChannelSimulator {
  /** The ChannelDefinition id (`channels.<id>`). */
  id: string;
  /** Starts the channel's fake platform API (the same fake the tests use) on 127.0.0.1. */
  startFake(): Promise<RunningFake>;
  /**
   * Points the block at the fake. `env` is what the Worker will see (.dev.vars + shell): a secret
   * the block already resolves to keeps its value; a missing one is generated and returned in `env`.
   */
  prepare(
    block: Record<string, unknown> | undefined,
    fakeUrl: string,
    env: Readonly<Record<string, string>>,
  ): PreparedChannel;
  /**
   * Builds and signs the webhook exactly as the platform would send it to `webhookUrl`; absent for a
   * channel whose messages only ever arrive over a socket (Discord, Mattermost).
   */
  webhook?(
    message: SimulatedMessage,
    target: { webhookUrl: string; secrets: Record<string, string>; fakeUrl: string },
  ): Promise<Request>;
  /**
   * For an account the companion serves (Discord's Gateway, Mattermost's WebSocket, Slack Socket
   * Mode, Telegram long polling): has the fake platform send the message over the socket (or poll)
   * the running companion holds, as the platform would, and returns the event id the companion
   * forwards it under (its outbox key, named in the Worker's ingress answer).
   */
  socket?: SocketSimulation;
  /**
   * The replies the fake has received so far in the conversation `message` is in (oldest first),
   * formatted as the platform shows them. `simulate` reads them before and after posting and prints
   * what is new.
   */
  replies(fakeUrl: string, message: SimulatedMessage): Promise<string[]>;
}

export interface SocketSimulation {
  /**
   * Hands `message` to the fake for the companion to read; waits (up to `deadline`, Unix ms) for the
   * companion to be connected to the fake first, and throws a readable error when it never is.
   */
  deliver(
    message: SimulatedMessage,
    target: { fakeUrl: string; secrets: Record<string, string>; deadline: number },
  ): Promise<{ eventId: string }>;
}

/** A simulator that can post its platform's webhooks (every channel but the socket-only ones). */
export type WebhookSimulator = ChannelSimulator & Required<Pick<ChannelSimulator, "webhook">>;
