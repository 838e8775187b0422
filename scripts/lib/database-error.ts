/**
 * What went wrong talking to Postgres, in words a user can act on. The Neon driver's failures arrive
 * wrapped (drizzle's "Failed query: <sql>" → the WebSocket's ErrorEvent → the socket's error), and
 * the outer message names only the SQL; the cause is at the bottom of the chain.
 */
interface ErrorLike {
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  error?: unknown;
}

export function describeDatabaseError(error: unknown): string {
  const chain = causeChain(error);
  const codes = chain.map((e) => (typeof e.code === "string" ? e.code : "")).filter(Boolean);
  const root = chain[chain.length - 1];
  const message =
    root && typeof root.message === "string" && root.message ? root.message : String(error);
  const has = (pattern: RegExp) =>
    codes.some((code) => pattern.test(code)) || pattern.test(message);

  let kind: string;
  if (has(/ENOTFOUND|EAI_AGAIN|EAI_NONAME|getaddrinfo/))
    kind =
      "DNS: the database host name does not resolve (check the host in DATABASE_URL, and the network)";
  else if (has(/CERT|SSL|TLS|self[- ]signed|wrong version number/i))
    kind = "TLS: the secure connection failed (certificate or protocol)";
  else if (has(/^28P01$|^28000$|password authentication failed|authentication/i))
    kind = "authentication: the user or password in DATABASE_URL was refused";
  else if (has(/^3D000$|database .* does not exist/))
    kind = "the database named in DATABASE_URL does not exist";
  else if (has(/ECONNREFUSED/))
    kind = "connection refused: nothing accepts connections at that host and port";
  else if (has(/ETIMEDOUT|timeout/i)) kind = "timeout: the database host did not answer";
  else if (has(/ECONNRESET|EPIPE|closed/i)) kind = "the connection was closed by the other side";
  else kind = "database error";

  const failedQuery = chain
    .map((e) =>
      typeof e.message === "string" ? /^Failed query: ([^\n]*)/.exec(e.message)?.[1] : undefined,
    )
    .find(Boolean);
  return `${kind} — ${message}${failedQuery ? ` (while running: ${failedQuery.slice(0, 120)})` : ""}`;
}

function causeChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (
    current &&
    typeof current === "object" &&
    chain.length < 8 &&
    !chain.includes(current as ErrorLike)
  ) {
    const e = current as ErrorLike;
    chain.push(e);
    current = e.cause ?? e.error;
  }
  return chain;
}
