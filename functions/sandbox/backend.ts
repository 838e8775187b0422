import type * as z from "zod";
import { resolveSecret, type SecretEnv } from "../config/secret-ref.ts";
import type { CompanionOutboundSettings } from "../channels/companion/outbound-client.ts";
import { signRequest } from "../channels/companion/signature.ts";
import { hostErrorSchema, type SandboxOpInput } from "./wire.ts";
import { EdgeclawError, type ErrorClass } from "../core/errors.ts";

/**
 * One backend interface for every place commands run: it carries a sandbox protocol request
 * (wire.ts) to a sandbox host and returns its answer. Two implementations:
 * - companion: a signed `POST {companion.url}/v1/sandbox` (outbound key, as /v1/outbound), where
 *   the companion runs the command in bubblewrap (`npm run dev`, self-hosted);
 * - container: the sandbox Durable Object of the scope (durable-objects/sandbox.ts), which starts
 *   its Cloudflare Container and forwards the same request to the host process inside it.
 */
export interface SandboxBackend {
  readonly name: "companion" | "container";
  call<T extends z.ZodType>(op: SandboxOpInput, schema: T): Promise<z.infer<T>>;
}

export type SandboxErrorCode =
  /** The sandbox cannot run commands (bubblewrap missing, namespaces refused): said as is. */
  | "unavailable"
  /** The host did not answer (companion down, container not reachable): nothing is known. */
  | "unreachable"
  /** The host refused the request (bad workdir, bad signature, misconfiguration). */
  | "refused";

/** Its class follows the code: unavailable is transient, unreachable unknown, refused permanent. */
export class SandboxError extends EdgeclawError {
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
  ) {
    super(SANDBOX_ERROR_CLASS[code], message);
  }
}

const SANDBOX_ERROR_CLASS: Record<SandboxErrorCode, ErrorClass> = {
  unavailable: "transient",
  unreachable: "outcome-unknown",
  refused: "permanent",
};

export function companionBackend(
  settings: CompanionOutboundSettings,
  env: SecretEnv,
  fetcher: typeof fetch = fetch,
): SandboxBackend {
  return {
    name: "companion",
    async call(op, schema) {
      if (!settings.url)
        throw new SandboxError(
          "refused",
          'companion.url is not set: agents.defaults.sandbox.backend "companion" runs commands on the companion (set companion.url and companion.outboundKeys)',
        );
      const signing = settings.outboundKeys[0];
      const secret = signing ? resolveSecret(signing.secret, env) : undefined;
      if (!signing || !secret)
        throw new SandboxError(
          "refused",
          "no companion outbound key secret (companion.outboundKeys, EDGECLAW_COMPANION_OUTBOUND_SECRET): the sandbox requests are signed with it",
        );
      const target = new URL(
        "v1/sandbox",
        settings.url.endsWith("/") ? settings.url : `${settings.url}/`,
      );
      const body = JSON.stringify(op);
      const headers = await signRequest(
        { id: signing.id, secret },
        {
          method: "POST",
          path: target.pathname,
          body: new TextEncoder().encode(body),
          timestamp: Math.floor(Date.now() / 1000),
        },
      );
      const waitMs = "waitMs" in op && typeof op.waitMs === "number" ? op.waitMs : 0;
      let response: Response;
      try {
        response = await fetcher(target.toString(), {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body,
          signal: AbortSignal.timeout(waitMs + settings.outboundTimeoutMs + 5_000),
        });
      } catch (error) {
        throw new SandboxError(
          "unreachable",
          `the companion at companion.url did not answer: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return parseAnswer(response.status, await response.json().catch(() => ({})), schema);
    },
  };
}

/** What the container backend needs of the sandbox Durable Object namespace. */
export interface SandboxNamespace {
  getByName(name: string): {
    sandbox(op: SandboxOpInput): Promise<{ status: number; body: unknown }>;
  };
}

/** What the container backend needs of the Worker's env: the binding, and the deploy's word that the container exists. */
export interface ContainerBackendEnv {
  SANDBOX?: SandboxNamespace;
  /** "1" when `npx edgeclaw deploy` added the sandbox container (scripts/lib/deploy-config.ts). */
  EDGECLAW_SANDBOX_CONTAINER?: string;
}

/**
 * Why the container backend cannot serve here, or undefined. The SANDBOX binding is always in
 * wrangler.toml (its migration is never undone), but its container exists only when the deploy
 * added it; without it the class cannot even be constructed, so the session says so up front.
 */
export function containerBackendProblem(env: ContainerBackendEnv): string | undefined {
  if (env.SANDBOX && env.EDGECLAW_SANDBOX_CONTAINER === "1") return undefined;
  return 'agents.defaults.sandbox.backend is "container" (a Cloudflare Container per sandbox scope), but this Worker was not deployed with the sandbox container: deploy with `npx edgeclaw deploy`, which adds it when an agent\'s sandbox backend is "container"; under `npm run dev` use backend "companion" (bubblewrap)';
}

/**
 * The backend that serves `scope` for a sandbox placed on `kind`: the companion's bubblewrap, or
 * the scope's container (refused, with how to fix it, when the Worker was deployed without one).
 * The one choice the session's exec and the computing environment's conda commands both make.
 */
export function sandboxBackend(
  kind: "companion" | "container" | undefined,
  companion: CompanionOutboundSettings,
  env: Record<string, unknown>,
  scope: string,
): SandboxBackend {
  if (kind === "container") {
    const containerEnv = env as unknown as ContainerBackendEnv;
    const problem = containerBackendProblem(containerEnv);
    if (problem || !containerEnv.SANDBOX)
      throw new SandboxError("refused", problem ?? "no SANDBOX binding");
    return containerBackend(containerEnv.SANDBOX, scope);
  }
  return companionBackend(companion, env as unknown as SecretEnv);
}

export function containerBackend(namespace: SandboxNamespace, scope: string): SandboxBackend {
  return {
    name: "container",
    async call(op, schema) {
      let answer: { status: number; body: unknown };
      try {
        answer = await namespace.getByName(scope).sandbox(op);
      } catch (error) {
        throw new SandboxError(
          "unreachable",
          `the sandbox container did not answer: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return parseAnswer(answer.status, answer.body, schema);
    },
  };
}

function parseAnswer<T extends z.ZodType>(status: number, body: unknown, schema: T): z.infer<T> {
  if (status === 200) {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    throw new SandboxError(
      "refused",
      `the sandbox host answered something unexpected: ${parsed.error.issues[0]?.message}`,
    );
  }
  const error = hostErrorSchema.safeParse(body);
  const message = error.success ? error.data.error : `HTTP ${status}`;
  if (status === 503) throw new SandboxError("unavailable", message);
  if (status >= 500) throw new SandboxError("unreachable", `the sandbox host failed: ${message}`);
  throw new SandboxError("refused", `the sandbox host refused the request: ${message}`);
}
