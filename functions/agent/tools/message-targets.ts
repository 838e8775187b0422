/**
 * The `message` tool's raw targets, in the forms OpenClaw's `openclaw message send --target`
 * takes them: `user:<id>` (Discord, Slack, Mattermost, MS Teams), `channel:<id>`, a Discord
 * `<@id>` mention, Google Chat's `spaces/<id>` and `users/<id>`, MS Teams' `conversation:<id>`
 * (or a bare `19:…@thread…` id), a Telegram chat id, an E.164 number for SMS, and a bare id, which
 * names a conversation (Discord, Slack and Mattermost treat a bare id as a channel). A target may
 * repeat its channel in front (`telegram:123`). A name to look up (`@username`, `#general`) is
 * refused: no directory is searched here, so the id has to be given.
 */
export interface MessageTarget {
  /** `user`: a person (their direct chat); `chat`: a conversation id; `any`: either. */
  kind: "user" | "chat" | "any";
  id: string;
}

const USER_PREFIXES = ["user:", "u:"];
const CHAT_PREFIXES = ["channel:", "conversation:", "chat:", "group:", "chat_id:"];

export function parseMessageTarget(
  channel: string,
  raw: string,
): MessageTarget | { error: string } {
  let target = raw.trim();
  if (target.toLowerCase().startsWith(`${channel}:`)) target = target.slice(channel.length + 1);
  const lower = target.toLowerCase();
  for (const prefix of USER_PREFIXES)
    if (lower.startsWith(prefix)) return named("user", target.slice(prefix.length));
  for (const prefix of CHAT_PREFIXES)
    if (lower.startsWith(prefix)) return named("chat", target.slice(prefix.length));
  const mention = /^<@!?(\d+)>$/.exec(target);
  if (mention) return { kind: "user", id: mention[1]! };
  // Google Chat names its spaces and people by resource name; a route holds the same name.
  if (/^spaces\/[^/\s]+$/.test(target)) return { kind: "chat", id: target };
  if (/^users\/[^/\s]+$/.test(target)) return { kind: "user", id: target };
  if (target.startsWith("@") || target.startsWith("#"))
    return {
      error: `target "${raw}" is a name; names are not looked up here — give the id (user:<id> or channel:<id>)`,
    };
  return named("any", target);
}

function named(kind: MessageTarget["kind"], id: string): MessageTarget | { error: string } {
  const trimmed = id.trim();
  if (!trimmed || /\s/.test(trimmed)) return { error: `"${id}" is not a target id` };
  return { kind, id: trimmed };
}

/** Whether a conversation's last route (and its chat type) is the one a target names. */
export function targetMatches(
  target: MessageTarget,
  row: { chatType: string | null; to?: string; senderId?: string },
): boolean {
  const person = row.chatType === "direct" && row.senderId === target.id;
  if (target.kind === "user") return person || (row.chatType === "direct" && row.to === target.id);
  if (target.kind === "chat") return row.to === target.id;
  return row.to === target.id || person;
}
