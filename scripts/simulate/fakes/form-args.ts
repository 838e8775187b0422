/**
 * A Bot/Web API call's arguments as the platform reads them (Slack's Web API, Telegram's Bot API):
 * a JSON body, or a form whose nested values (Slack's metadata and blocks, Telegram's
 * reply_parameters and allowed_updates) are JSON strings inside it; a field that only looks like
 * JSON stays text.
 */
export function formOrJsonArgs(
  body: string,
  contentType: string | undefined,
): Record<string, unknown> {
  if (!body) return {};
  if ((contentType ?? "").includes("application/json"))
    return JSON.parse(body) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body))
    args[key] = /^[[{]/.test(value) ? jsonOrText(value) : value;
  return args;
}

/** The value parsed as JSON, or the text itself when it is not JSON. */
export function jsonOrText(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
