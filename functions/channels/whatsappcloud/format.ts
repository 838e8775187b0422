import { markdownToGoogleChat } from "../googlechat/format.ts";

/**
 * Markdown as models write it → WhatsApp's formatting (WhatsApp FAQ "How to format your
 * messages"): `*bold*`, `_italic_`, `~strike~`, code as written — the same markers Google Chat
 * uses, so its converter is reused (one copy in the Worker's bundle) and only links differ:
 * WhatsApp has no link markup, so Chat's `<url|label>` becomes `label (url)`.
 */
export function markdownToWhatsApp(markdown: string): string {
  return markdownToGoogleChat(markdown).replace(
    /<((?:https?|mailto):[^|>\s]+)\|([^>]*)>/g,
    "$2 ($1)",
  );
}
