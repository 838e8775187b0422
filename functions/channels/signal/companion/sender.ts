import {
  OutboundRejectedError,
  type OutboundCommand,
  type OutboundReceipt,
  type OutboundSender,
} from "../../../../companion/src/outbound.ts";
import type { CommandJournal } from "./journal.ts";
import {
  RPC_CODES,
  SignalAnswerLost,
  SignalDaemonUnreachable,
  SignalRpcError,
  type SignalRpc,
} from "./rpc.ts";

/**
 * The Worker's commands for one Signal account (`POST /v1/outbound`, companion/src/http.ts) as
 * signal-cli JSON-RPC calls: `send` (text, with a quote of the trigger), `sendReaction`,
 * `sendTyping` (typing) and `sendReceipt` (markRead, type "read").
 *
 * A message or a reaction is a visible side effect, so it goes through the journal (journal.ts):
 * a command already sent is answered with the Signal timestamp signal-cli gave it (the message's
 * id: quotes, reactions and edits name it), one whose outcome is unknown is refused
 * `outcome_unknown` and never sent again. signal-cli's own refusals are told apart: nothing was
 * sent when the daemon was unreachable, rate-limited or had only network failures (the Worker
 * retries), and a refusal for good (unregistered recipient, untrusted identity, a bad group) is
 * final. Typing and read receipts repeat harmlessly and skip the journal.
 */
export interface SignalSenderOptions {
  rpc: SignalRpc;
  journal: CommandJournal;
  /** `{ account }` for a multi-account daemon, `{}` for one started with `-a` (connector.ts learns which). */
  accountParam(): Record<string, unknown>;
  /** One send's wait for signal-cli (a group send to many members takes a while). */
  timeoutMs?: number;
}

export function signalSender(options: SignalSenderOptions): OutboundSender {
  const { rpc, journal } = options;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const call = <T>(method: string, params: Record<string, unknown>) =>
    rpc.call<T>(method, { ...options.accountParam(), ...params }, { timeoutMs });

  async function once(
    command: OutboundCommand,
    make: () => Promise<{ timestamp?: unknown }>,
  ): Promise<OutboundReceipt> {
    const prior = await journal.get(command.commandId);
    if (prior?.state === "sent")
      return { platformMessageIds: [String(prior.timestamp)], sentAt: Date.now() };
    if (prior?.state === "pending")
      throw new OutboundRejectedError(
        "outcome_unknown",
        "an earlier attempt of this command may have been sent (its answer was lost); not sent again",
      );
    await journal.pending(command.commandId);
    let answer: { timestamp?: unknown };
    try {
      answer = await make();
    } catch (error) {
      if (error instanceof SignalAnswerLost)
        throw new OutboundRejectedError("outcome_unknown", error.message);
      await journal.clear(command.commandId);
      throw refusal(error);
    }
    const timestamp = Number(answer?.timestamp);
    if (!Number.isSafeInteger(timestamp))
      throw new OutboundRejectedError("outcome_unknown", "signal-cli answered without a timestamp");
    await journal.sent(command.commandId, timestamp);
    return { platformMessageIds: [String(timestamp)], sentAt: Date.now() };
  }

  return {
    async send(command) {
      const to = destination(command.target.conversationId);
      const text = typeof command.payload.text === "string" ? command.payload.text : "";
      switch (command.op) {
        case "send": {
          const quote = quoteParams(command);
          const styles = Array.isArray(command.payload.textStyle) ? command.payload.textStyle : [];
          return once(command, () =>
            call("send", {
              ...to,
              message: text,
              ...quote,
              ...(styles.length ? { textStyle: styles } : {}),
            }),
          );
        }
        case "react": {
          const emoji = command.payload.emoji;
          const author = command.payload.targetAuthor;
          const target = Number(command.target.messageId);
          if (typeof emoji !== "string" || typeof author !== "string" || !target)
            throw new OutboundRejectedError(
              "invalid_command",
              "a reaction needs payload.emoji, payload.targetAuthor and target.messageId",
            );
          return once(command, () =>
            call("sendReaction", {
              ...to,
              emoji,
              targetAuthor: bare(author),
              targetTimestamp: target,
              remove: command.payload.remove === true,
            }),
          );
        }
        case "typing":
          await call("sendTyping", { ...to, stop: command.payload.stop === true }).catch(
            (error: unknown) => {
              throw refusal(error);
            },
          );
          return { platformMessageIds: [], sentAt: Date.now() };
        case "markRead": {
          const target = Number(command.target.messageId);
          if (!target || "groupId" in to)
            throw new OutboundRejectedError(
              "invalid_command",
              "a read receipt needs target.messageId in a DM (signal-cli has none for groups)",
            );
          await call("sendReceipt", {
            recipient: to.recipient[0],
            targetTimestamp: [target],
            type: "read",
          }).catch((error: unknown) => {
            throw refusal(error);
          });
          return { platformMessageIds: [], sentAt: Date.now() };
        }
        default:
          throw new OutboundRejectedError(
            "unsupported",
            `Signal does not take ${command.op} commands here`,
          );
      }
    },
  };
}

/** `group:<id>` → groupId; `uuid:<uuid>` or a number → recipient. */
function destination(conversationId: string): { groupId: string } | { recipient: [string] } {
  if (conversationId.startsWith("group:")) return { groupId: conversationId.slice(6) };
  return { recipient: [bare(conversationId)] };
}

function bare(id: string): string {
  return id.startsWith("uuid:") ? id.slice(5) : id;
}

function quoteParams(command: OutboundCommand): Record<string, unknown> {
  const timestamp = Number(command.target.replyToId);
  const author = command.payload.quoteAuthor;
  if (!timestamp || typeof author !== "string") return {};
  return { quoteTimestamp: timestamp, quoteAuthor: bare(author) };
}

/**
 * signal-cli said no, or could not be reached: a plain Error (the HTTP layer answers 503 and the
 * Worker retries the same command) when nothing was sent for a passing reason, else a final refusal.
 */
function refusal(error: unknown): Error {
  if (error instanceof SignalDaemonUnreachable) return error;
  if (!(error instanceof SignalRpcError))
    return error instanceof Error ? error : new Error(String(error));
  if (error.code === RPC_CODES.rateLimit || error.code === RPC_CODES.ioError) return error;
  if (error.code === RPC_CODES.userError && onlyNetworkFailures(error.data)) return error;
  const code =
    error.code === RPC_CODES.untrustedKey
      ? "untrusted_identity"
      : unregistered(error.data)
        ? "unregistered"
        : error.code === RPC_CODES.invalidParams
          ? "invalid_params"
          : "refused";
  return new OutboundRejectedError(code, error.message);
}

function results(data: unknown): Array<{ type?: unknown }> {
  const response = (data as { response?: { results?: unknown } } | null)?.response;
  return Array.isArray(response?.results) ? (response.results as Array<{ type?: unknown }>) : [];
}

function onlyNetworkFailures(data: unknown): boolean {
  const list = results(data);
  return list.length > 0 && list.every((r) => r.type === "NETWORK_FAILURE");
}

function unregistered(data: unknown): boolean {
  const list = results(data);
  return list.length > 0 && list.every((r) => r.type === "UNREGISTERED_FAILURE");
}
