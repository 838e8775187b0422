import {
  SELF,
  env,
  listDurableObjectIds,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../workers/env.ts";
import { callWorker, TOKEN } from "../openai/scripted-sessions.ts";
import * as loadedGatewayAuth from "../../workers/gateway-auth.ts";

/**
 * Failed gateway-auth counting holds across isolates: the count lives in one AuthLimiterDO per
 * client address bucket, not in the memory of whichever isolate served the request.
 */

const bindings = env as unknown as Env;
let addressCounter = 0;
/** A client address no other test uses (each has its own counter). */
const freshAddress = () => `192.0.2.${++addressCounter}`;

function request(path: string, address: string, token?: string): Request {
  const headers: Record<string, string> = { "cf-connecting-ip": address };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return new Request(`https://edgeclaw.test${path}`, { headers });
}

const viaSelf = (path: string, address: string, token?: string) =>
  SELF.fetch(request(path, address, token));

function limiterFor(bucket: string) {
  return bindings.AUTH_LIMITER.get(bindings.AUTH_LIMITER.idFromName(bucket));
}

/** The failure count the bucket's object holds (undefined: nothing stored). */
async function storedFailures(bucket: string): Promise<number | undefined> {
  return runInDurableObject(
    limiterFor(bucket),
    async (_instance, state) =>
      (await state.storage.get<{ failures: number }>("attempts"))?.failures,
  );
}

/** The Worker with this config (same bindings, same AUTH_LIMITER namespace). */
function withConfig(auth: Record<string, unknown>) {
  const config = JSON.stringify({ gateway: { auth: { token: TOKEN, ...auth } } });
  return (path: string, address: string, token?: string) =>
    callWorker(request(path, address, token), { EDGECLAW_CONFIG: config });
}

type GatewayAuthModule = typeof import("../../workers/gateway-auth.ts");
let instanceCounter = 0;
/** A new instance of the gateway-auth module, with memory of its own: what another isolate would run. */
async function freshGatewayAuth(): Promise<GatewayAuthModule> {
  const specifier = `../../workers/gateway-auth.ts?instance=${++instanceCounter}`;
  return (await import(/* @vite-ignore */ specifier)) as GatewayAuthModule;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("failed-auth lockout across isolates", () => {
  it("counts failures on /v1 and /admin in one object per address, then refuses even the right token", async () => {
    const address = freshAddress();
    for (let i = 0; i < 5; i++)
      expect((await viaSelf("/v1/models", address, `guess-${i}`)).status).toBe(401);
    for (let i = 5; i < 9; i++)
      expect((await viaSelf("/admin/pairing/slack", address, `guess-${i}`)).status).toBe(401);
    expect(await storedFailures(address)).toBe(9);
    // The 10th failure is answered as what it is, and starts the lockout.
    expect((await viaSelf("/admin/pairing/slack", address, "guess-9")).status).toBe(401);
    const locked = await viaSelf("/v1/models", address, TOKEN);
    expect(locked.status).toBe(429);
    const retryAfter = Number(locked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(300);
    expect(await locked.json()).toMatchObject({
      error: { code: "rate_limited", type: "rate_limit_error" },
    });
    // Another address with the right token is not affected, and nothing was stored for it.
    const other = freshAddress();
    expect((await viaSelf("/v1/models", other, TOKEN)).status).toBe(200);
    expect(await storedFailures(other)).toBeUndefined();
  });

  it("a fresh module instance (a new isolate) neither resets the count nor forgets the lockout", async () => {
    const address = freshAddress();
    for (let i = 0; i < 5; i++)
      expect((await viaSelf("/v1/models", address, `guess-${i}`)).status).toBe(401);
    const fresh = await freshGatewayAuth();
    expect(fresh).not.toBe(loadedGatewayAuth);
    for (let i = 5; i < 10; i++) {
      expect(
        await fresh.checkGatewayAuth(request("/v1/models", address, `guess-${i}`), bindings),
      ).toMatchObject({ ok: false, status: 401 });
    }
    expect((await viaSelf("/v1/models", address, TOKEN)).status).toBe(429);
    const another = await freshGatewayAuth();
    expect(
      await another.checkGatewayAuth(request("/v1/models", address, TOKEN), bindings),
    ).toMatchObject({ ok: false, status: 429, code: "rate_limited" });
  });

  it("a lockout ends after lockoutMs, a right token then clears the count, old failures leave the window", async () => {
    const call = withConfig({ rateLimit: { maxAttempts: 3, windowMs: 60_000, lockoutMs: 1_500 } });
    const address = freshAddress();
    for (let i = 0; i < 3; i++)
      expect((await call("/v1/models", address, `guess-${i}`)).status).toBe(401);
    const locked = await call("/v1/models", address, TOKEN);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeLessThanOrEqual(2);
    await sleep(1_600);
    expect((await call("/v1/models", address, TOKEN)).status).toBe(200);
    expect(await storedFailures(address)).toBeUndefined();
    // Two failures, a success (clears), two more: never three in a row, so never locked.
    for (const token of ["a", "b", TOKEN, "c", "d", TOKEN]) {
      expect((await call("/v1/models", address, token)).status).toBe(token === TOKEN ? 200 : 401);
    }

    const windowed = withConfig({
      rateLimit: { maxAttempts: 3, windowMs: 400, lockoutMs: 60_000 },
    });
    const slow = freshAddress();
    for (const token of ["a", "b"])
      expect((await windowed("/v1/models", slow, token)).status).toBe(401);
    await sleep(450);
    for (const token of ["c", "d"])
      expect((await windowed("/v1/models", slow, token)).status).toBe(401);
    expect((await windowed("/v1/models", slow, TOKEN)).status).toBe(200);
  });

  it("the object forgets an address once its window has passed", async () => {
    const call = withConfig({ rateLimit: { maxAttempts: 5, windowMs: 200, lockoutMs: 60_000 } });
    const address = freshAddress();
    expect((await call("/v1/models", address, "wrong")).status).toBe(401);
    expect(await storedFailures(address)).toBe(1);
    await sleep(250);
    // The alarm may have fired on its own already; either way nothing is left afterwards.
    await runDurableObjectAlarm(limiterFor(address));
    expect(await storedFailures(address)).toBeUndefined();
  });

  it("loopback is exempt by default, and limited like anyone with exemptLoopback false", async () => {
    for (const loopback of ["127.0.0.1", "::1"]) {
      for (let i = 0; i < 12; i++)
        expect((await viaSelf("/v1/models", loopback, `guess-${i}`)).status).toBe(401);
      expect((await viaSelf("/v1/models", loopback, TOKEN)).status).toBe(200);
    }
    const limiterIds = (await listDurableObjectIds(bindings.AUTH_LIMITER)).map(String);
    expect(limiterIds).not.toContain(String(bindings.AUTH_LIMITER.idFromName("127.0.0.1")));

    const strict = withConfig({ rateLimit: { maxAttempts: 2, exemptLoopback: false } });
    for (const token of ["a", "b"])
      expect((await strict("/v1/models", "127.0.0.9", token)).status).toBe(401);
    expect((await strict("/v1/models", "127.0.0.9", TOKEN)).status).toBe(429);
  });

  it("a missing token does not count; IPv6 addresses count per /64", async () => {
    const address = freshAddress();
    for (let i = 0; i < 12; i++) expect((await viaSelf("/v1/models", address)).status).toBe(401);
    expect((await viaSelf("/v1/models", address, TOKEN)).status).toBe(200);

    const call = withConfig({ rateLimit: { maxAttempts: 2 } });
    expect((await call("/v1/models", "2001:db8:7:7::a", "x")).status).toBe(401);
    expect((await call("/v1/models", "2001:db8:7:7:ffff::b", "y")).status).toBe(401);
    expect((await call("/v1/models", "2001:db8:7:7::c", TOKEN)).status).toBe(429);
    expect((await call("/v1/models", "2001:db8:7:8::a", TOKEN)).status).toBe(200);
  });

  it('mode "password" is limited the same way', async () => {
    const call = withConfig({
      mode: "password",
      password: "correct horse",
      rateLimit: { maxAttempts: 2 },
    });
    const address = freshAddress();
    expect((await call("/v1/models", address, "correct horse")).status).toBe(200);
    for (const guess of ["battery", "staple"])
      expect((await call("/v1/models", address, guess)).status).toBe(401);
    expect((await call("/v1/models", address, "correct horse")).status).toBe(429);
  });
});
