import type { SessionControl } from "./session-control.ts";

/**
 * `/send on|off|inherit` (owner only, tools/slash-commands): whether the agent's replies reach this
 * chat. `off` holds them back — the agent still runs and its answers stay in the transcript — until
 * `/send on`; `inherit` (or default, clear, reset) returns to session.sendPolicy. Bare `/send` shows.
 */
export async function sendCommand(
  args: string,
  session: SessionControl,
  senderIsOwner: boolean,
): Promise<string> {
  const arg = args.trim().toLowerCase();
  if (!arg) {
    const { send } = await session.status();
    const where =
      send.source === "session"
        ? "this session's /send"
        : send.source === "rule"
          ? "a session.sendPolicy rule"
          : "session.sendPolicy's default";
    return `Send: ${send.allowed ? "on" : "off"} (${where}). Options: on, off, inherit.`;
  }
  if (!senderIsOwner)
    return "Only the owner can change the send policy (commands.ownerAllowFrom); nothing changed.";
  if (arg === "on") {
    await session.updateSettings({ sendPolicy: "allow" });
    return "Send on: replies reach this chat.";
  }
  if (arg === "off") {
    await session.updateSettings({ sendPolicy: "deny" });
    return "Send off: the agent's replies in this chat are held back (kept in the transcript) until /send on.";
  }
  if (["inherit", "default", "clear", "reset"].includes(arg)) {
    await session.updateSettings({ sendPolicy: null });
    const { send } = await session.status();
    return `Send policy back to session.sendPolicy: ${send.allowed ? "on" : "off"}.`;
  }
  return `Unknown /send option "${args.trim()}". Options: on, off, inherit.`;
}
