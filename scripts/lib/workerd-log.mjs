// workerd's own diagnostics, made readable for the dev terminal. A failed outbound fetch (a model
// provider that does not resolve, a closed port, HTTPS to a plain server) makes workerd print the
// KJ exception several times, each with a `stack:` line of binary addresses, then echo the JS
// error twice as "uncaught exception" although the Worker caught it (and logs its own line that
// names the cause: functions/agent/providers/unreachable.ts). This keeps one short line per cause
// and drops the copies, and drops the inspector's start-up note; every other line passes unchanged. Plain JavaScript: local-worker.mjs
// runs under plain node.

/** How long an identical condensed line is not repeated (one failure prints its cause ~3 times). */
const REPEAT_WINDOW_MS = 2_000;

/** workerd's source location and level in front of a message ("workerd/io/worker.c++:2484: info: "). */
const LOG_PREFIX = /^workerd\/\S+:\d+: (?:info|warning|error): /;
const ADDRESS_STACK = /^stack:( \S+@[0-9a-f]+)+(;.*)?\s*$/;
/** The JS-side echo of a fetch failure: workerd's messages for refused/reset and DNS/TLS. */
const FETCH_FAILURE_ECHO =
  /^uncaught exception; (?:source = Uncaught \((?:in promise|async)\); stack = Error|exception = workerd\/jsg\/\S+: (?:disconnected|failed): jsg\.Error): (?:Network connection lost\.|internal error; reference = \w+)\s*$/;

/**
 * workerd's note that the inspector it was given a port for is up: printed before dev's banner, it
 * names neither the port nor a use, and is the first thing a new user reads ("is that an error?").
 */
const INSPECTOR_NOTE = /^Inspector is listening\s*$/;

/** KJ exception lines that name a connection's cause, as a short line (or undefined). */
function condensedCause(line) {
  const dns =
    /DNS lookup failed\.; params\.host = ([^;]*);.*?gai_strerror\(status\) = ([^;]+)/.exec(line);
  if (dns) return `workerd: DNS lookup failed for ${dns[1]} (${dns[2].trim()})`;
  const connect = /^exception = kj\/\S+: disconnected: (connect\(\): .+)$/.exec(line);
  if (connect) return `workerd: outbound connection failed: ${connect[1].trim()}`;
  const tls = /^e = kj\/compat\/tls\.c\+\+:\d+: failed: OpenSSL error; message = ([^;]+)/.exec(
    line,
  );
  if (tls) return `workerd: TLS handshake failed: ${tls[1].trim()}`;
  return undefined;
}

/**
 * A line filter: `filter(line)` answers the line to print, or undefined to drop it. Stateful (it
 * remembers recent condensed lines), so keep one per output stream.
 */
export function workerdLogFilter(now = () => Date.now()) {
  const lastPrinted = new Map();
  return (line) => {
    const message = line.replace(LOG_PREFIX, "");
    if (
      ADDRESS_STACK.test(message) ||
      FETCH_FAILURE_ECHO.test(message) ||
      INSPECTOR_NOTE.test(message)
    )
      return undefined;
    const condensed = condensedCause(message);
    if (condensed === undefined) return line;
    const at = now();
    const previous = lastPrinted.get(condensed);
    for (const [text, when] of lastPrinted)
      if (at - when > REPEAT_WINDOW_MS) lastPrinted.delete(text);
    if (previous !== undefined && at - previous <= REPEAT_WINDOW_MS) return undefined;
    lastPrinted.set(condensed, at);
    return condensed;
  };
}
