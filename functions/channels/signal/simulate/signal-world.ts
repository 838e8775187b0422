/**
 * What the fake signal-cli daemon (signal-daemon.ts) knows: the accounts it serves, the envelopes
 * waiting for each account's next `receive` (what the Signal server would hand signal-cli), the
 * groups, the attachments signal-cli would have downloaded, and everything the bot sent. Envelopes
 * are built in signal-cli's own JSON shape (JsonMessageEnvelope / JsonDataMessage).
 */

export const FAKE_SIGNAL_BOT = {
  number: "+15550000001",
  uuid: "0b0b0b0b-0000-4000-8000-000000000001",
};

export interface SentCall {
  account: string;
  method: string;
  params: Record<string, unknown>;
  timestamp?: number;
  at: number;
}

export interface IncomingMessage {
  /** Sender number (E.164); `fromUuid` alone for a sender whose number is hidden. */
  from?: string;
  fromUuid?: string;
  name?: string;
  text?: string;
  groupId?: string;
  timestamp?: number;
  mentions?: Array<{ number?: string; uuid?: string; start: number; length: number }>;
  quote?: { id: number; authorNumber?: string; authorUuid?: string; text?: string };
  attachments?: Array<{ id: string; contentType: string; filename?: string; data?: string }>;
  reaction?: {
    emoji: string;
    targetAuthorNumber?: string;
    targetAuthorUuid?: string;
    targetSentTimestamp: number;
    isRemove?: boolean;
  };
}

export class FakeSignalWorld {
  /** Accounts the daemon serves (listAccounts). */
  readonly accounts = new Set<string>([FAKE_SIGNAL_BOT.number]);
  /** account → envelopes (signal-cli's receive items) waiting for the next receive. */
  private readonly queues = new Map<string, Array<Record<string, unknown>>>();
  private readonly waiters = new Map<string, Array<() => void>>();
  readonly groups = new Map<string, { name: string; members: string[] }>();
  /** attachment id → base64 bytes, as signal-cli keeps the files it downloaded. */
  readonly attachments = new Map<string, string>();
  /** Recipients signal-cli would answer UNREGISTERED_FAILURE for. */
  readonly unregistered = new Set<string>();
  readonly sent: SentCall[] = [];
  /** Envelopes handed out by receive, in order (what signal-cli has forgotten). */
  delivered = 0;
  private clock = Date.now();

  /** A strictly increasing timestamp: what a Signal client stamps a message with. */
  tick(): number {
    this.clock = Math.max(this.clock + 1, Date.now());
    return this.clock;
  }

  /** Queues a user's message (or reaction) for `account`; returns its timestamp. */
  incoming(message: IncomingMessage, account = FAKE_SIGNAL_BOT.number): number {
    const timestamp = message.timestamp ?? this.tick();
    for (const attachment of message.attachments ?? [])
      if (attachment.data !== undefined) this.attachments.set(attachment.id, attachment.data);
    const dataMessage: Record<string, unknown> = {
      timestamp,
      message: message.reaction ? null : (message.text ?? null),
      expiresInSeconds: 0,
      viewOnce: false,
      ...(message.mentions
        ? { mentions: message.mentions.map((m) => ({ name: m.number ?? m.uuid, ...m })) }
        : {}),
      ...(message.quote ? { quote: { attachments: [], ...message.quote } } : {}),
      ...(message.reaction ? { reaction: { isRemove: false, ...message.reaction } } : {}),
      ...(message.attachments
        ? {
            attachments: message.attachments.map(({ data, ...rest }) => ({
              ...rest,
              size: data === undefined ? null : Buffer.from(data, "base64").length,
            })),
          }
        : {}),
      ...(message.groupId
        ? {
            groupInfo: {
              groupId: message.groupId,
              groupName: this.groups.get(message.groupId)?.name ?? "",
              revision: 1,
              type: "DELIVER",
            },
          }
        : {}),
    };
    this.enqueue(account, {
      account,
      envelope: {
        source: message.from ?? message.fromUuid,
        sourceNumber: message.from ?? null,
        sourceUuid: message.fromUuid ?? null,
        sourceName: message.name ?? null,
        sourceDevice: 1,
        timestamp,
        serverReceivedTimestamp: timestamp + 5,
        serverDeliveredTimestamp: timestamp + 10,
        dataMessage,
      },
    });
    return timestamp;
  }

  /** Any receive item as signal-cli writes it (a typing or receipt envelope, an exception). */
  enqueue(account: string, item: Record<string, unknown>): void {
    const queue = this.queues.get(account) ?? [];
    queue.push(item);
    this.queues.set(account, queue);
    for (const wake of this.waiters.get(account) ?? []) wake();
    this.waiters.delete(account);
  }

  pending(account = FAKE_SIGNAL_BOT.number): number {
    return this.queues.get(account)?.length ?? 0;
  }

  /** Up to `max` waiting items, waiting up to `timeoutMs` for the first one; they stay queued until `taken`. */
  async next(
    account: string,
    max: number,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<Array<Record<string, unknown>>> {
    if (!this.pending(account) && timeoutMs > 0)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        signal.addEventListener("abort", () => resolve(), { once: true });
        const list = this.waiters.get(account) ?? [];
        list.push(() => {
          clearTimeout(timer);
          resolve();
        });
        this.waiters.set(account, list);
      });
    return (this.queues.get(account) ?? []).slice(0, max);
  }

  /** signal-cli forgets what it answered: the first `count` items leave the queue. */
  taken(account: string, count: number): void {
    this.queues.get(account)?.splice(0, count);
    this.delivered += count;
  }

  record(call: Omit<SentCall, "at">): SentCall {
    const entry = { ...call, at: Date.now() };
    this.sent.push(entry);
    return entry;
  }

  /** The bot's messages to one conversation (a number, `uuid:…` or `group:<id>`). */
  messagesTo(conversation: string): SentCall[] {
    return this.sent.filter(
      (call) => call.method === "send" && conversationOf(call.params) === conversation,
    );
  }
}

/** `group:<id>` for a group send, else the first recipient. */
export function conversationOf(params: Record<string, unknown>): string {
  if (typeof params.groupId === "string") return `group:${params.groupId}`;
  const recipient = Array.isArray(params.recipient) ? params.recipient[0] : params.recipient;
  return String(recipient ?? "");
}
