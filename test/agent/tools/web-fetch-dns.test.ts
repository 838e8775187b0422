import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import { checkFetchTarget, STRICT_SSRF_POLICY } from "../../../functions/http/ssrf.ts";
import { fakeWebUrl, toolContext } from "./context.ts";

/**
 * web_fetch resolves a host name before fetching it (DNS over HTTPS; here the fake resolver in
 * test/fakes/doh-server.ts) and refuses names that point inward, on the first hop and after each
 * redirect; configured headers go only to `headersHosts`. The fake web server on 127.0.0.1 is
 * reached through the suite's explicit allowance (`ssrfPolicy.allowedHostnames`), which is an IP
 * literal and never looked up.
 */

const dohUrl = () => String((env as unknown as Record<string, unknown>).FAKE_DOH_URL);
const resolverUrl = () => `${dohUrl()}/dns-query`;

function configFor(fetchConfig: Record<string, unknown> = {}) {
  const host = new URL(fakeWebUrl()).hostname;
  return parseConfig({
    tools: {
      web: {
        fetch: {
          ssrfPolicy: { allowedHostnames: [host] },
          cacheTtlMinutes: 0,
          dnsResolverUrl: resolverUrl(),
          ...fetchConfig,
        },
      },
    },
  });
}

async function webFetch(args: Record<string, unknown>, config = configFor()) {
  return runTool(
    createToolset(config, "main"),
    { name: "web_fetch", arguments: args },
    toolContext({ config }),
  );
}

async function requestsTo(
  base: string,
): Promise<Array<{ path: string; headers: Record<string, string> }>> {
  return (await (await fetch(`${base}/_control/requests`)).json()) as Array<{
    path: string;
    headers: Record<string, string>;
  }>;
}

beforeEach(async () => {
  await fetch(`${fakeWebUrl()}/_control/reset`, { method: "POST", body: "{}" });
  await fetch(`${dohUrl()}/_control/reset`, { method: "POST" });
});

describe("web_fetch and DNS", () => {
  it.each([
    ["loopback.ssrf.test", "127.0.0.1", /loopback/],
    ["private.ssrf.test", "10.1.2.3", /RFC 1918/],
    ["cgnat.ssrf.test", "100.64.0.7", /carrier-grade NAT/],
    ["metadata.ssrf.test", "169.254.169.254", /metadata/],
    ["v6loopback.ssrf.test", "::1", /loopback/],
    ["ula.ssrf.test", "fd00::1", /unique-local/],
    ["mixed.ssrf.test", "fd00::1", /unique-local/],
    ["alias.ssrf.test", "10.0.0.5", /RFC 1918/],
  ])("refuses %s, which resolves to %s", async (name, address, kind) => {
    const result = await webFetch({ url: `http://${name}/secret` });
    expect(result.isError).toBe(true);
    expect(result.content).toContain(
      `web_fetch refused http://${name}/secret: ${name} resolves to ${address}`,
    );
    expect(result.content).toMatch(kind);
    const asked = (await requestsTo(dohUrl())).map((request) =>
      new URL(request.path, "http://x").searchParams.get("type"),
    );
    expect(asked.sort()).toEqual(["A", "AAAA"]);
  });

  it.each([
    ["nowhere.ssrf.test", /does not exist/],
    ["empty.ssrf.test", /no A or AAAA record/],
    ["broken.ssrf.test", /resolver answered HTTP 500/],
  ])("refuses %s, which cannot be resolved (fail closed)", async (name, why) => {
    const result = await webFetch({ url: `https://${name}/` });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(why);
    expect(result.content).toContain("a name that cannot be resolved is not fetched");
  });

  it("refuses a redirect to a name that resolves inward, before requesting it", async () => {
    const result = await webFetch({
      url: `${fakeWebUrl()}/redirect?to=${encodeURIComponent("http://metadata.ssrf.test/latest/meta-data/")}`,
    });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /refused the redirect .* metadata\.ssrf\.test resolves to 169\.254\.169\.254/,
    );
  });

  it("lets a name with only public addresses through, having asked for both A and AAAA", async () => {
    const checked = await checkFetchTarget("https://public.ssrf.test/page", STRICT_SSRF_POLICY, {
      resolverUrl: resolverUrl(),
    });
    expect(checked.ok).toBe(true);
    const asked = (await requestsTo(dohUrl())).map(
      (request) => new URL(request.path, "http://x").searchParams,
    );
    expect(asked.map((query) => `${query.get("name")} ${query.get("type")}`).sort()).toEqual([
      "public.ssrf.test A",
      "public.ssrf.test AAAA",
    ]);
  });

  it("does not look up hosts that are explicitly allowed or written as IP literals", async () => {
    const result = await webFetch({ url: `${fakeWebUrl()}/plain.txt` });
    expect(result.isError).toBeFalsy();
    expect(await requestsTo(dohUrl())).toEqual([]);
  });
});

describe("web_fetch configured headers", () => {
  const headers = { "X-Routing-Target": "staging" };

  it("sends them to a listed host (host:port)", async () => {
    const host = new URL(fakeWebUrl()).host;
    await webFetch(
      { url: `${fakeWebUrl()}/plain.txt` },
      configFor({ headers, headersHosts: [host] }),
    );
    const [request] = await requestsTo(fakeWebUrl());
    expect(request?.headers["x-routing-target"]).toBe("staging");
  });

  it("never sends them to a host that is not listed, even the first one the model names", async () => {
    for (const headersHosts of [[], ["api.example.com"], ["*.example.com"], [`127.0.0.1:1`]]) {
      await webFetch({ url: `${fakeWebUrl()}/plain.txt` }, configFor({ headers, headersHosts }));
    }
    const requests = await requestsTo(fakeWebUrl());
    expect(requests).toHaveLength(4);
    for (const request of requests) expect(request.headers["x-routing-target"]).toBeUndefined();
  });

  it("drops them on a redirect from a listed host to one that is not", async () => {
    const webHost = new URL(fakeWebUrl()).host;
    const landing = `${dohUrl()}/landing`;
    const result = await webFetch(
      { url: `${fakeWebUrl()}/redirect?to=${encodeURIComponent(landing)}` },
      configFor({ headers, headersHosts: [webHost] }),
    );
    expect(result.isError).toBeFalsy();
    const [first] = await requestsTo(fakeWebUrl());
    expect(first?.headers["x-routing-target"]).toBe("staging");
    const [second] = await requestsTo(dohUrl());
    expect(second?.path).toBe("/landing");
    expect(second?.headers["x-routing-target"]).toBeUndefined();
  });
});
