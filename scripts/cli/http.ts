/**
 * The CLI's only way to the gateway: JSON over /admin with the gateway token. A non-2xx answer
 * becomes a CliError carrying the server's own reason, so the process exits non-zero with it.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/**
 * The command line itself is wrong (unknown command or option, a missing or malformed value): exit
 * 2 with the command's usage, never 1 (1 is a failure of the gateway or the platform).
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export interface Connection {
  url: string;
  token?: string;
}

export async function adminRequest(
  conn: Connection,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (conn.token) headers.authorization = `Bearer ${conn.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(`${conn.url.replace(/\/+$/, "")}/admin${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new CliError(
      `cannot reach ${conn.url}${cause} (is the gateway running? use --url or EDGECLAW_URL)`,
    );
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const reason = serverReason(json) ?? (text.slice(0, 300) || res.statusText);
    const retry = res.headers.get("retry-after");
    // Every unknown id (session, job, scope, pairing code) reads the same, whatever route said it.
    const what = res.status === 404 ? "not found" : String(res.status);
    throw new CliError(`${what}: ${reason}${retry ? ` (retry after ${retry}s)` : ""}`, res.status);
  }
  if (json === undefined)
    throw new CliError(`the server answered ${res.status} with a body that is not JSON`);
  return json;
}

function serverReason(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null || !("error" in json)) return undefined;
  const error = (json as { error: unknown }).error;
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && "message" in error)
    return String((error as { message: unknown }).message);
  return undefined;
}
