import { beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import { FAKE_SEARCH_KEYS } from "../../fakes/search-api.ts";
import { fakeWebUrl, toolContext } from "./context.ts";

interface SearchOutput {
  kind: string;
  provider: string;
  query: string;
  count: number;
  results: { title: string; url: string; published?: string; siteName?: string }[];
  externalContent: unknown;
  cached?: true;
  text: string;
  message?: string;
}

interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const api = (provider: string) => `${fakeWebUrl()}/search-api/${provider}`;

/** Every provider pointed at its fake; the cache off unless a test turns it on. */
function configFor(search: Record<string, unknown> = {}, keys: Record<string, unknown> = {}) {
  const entry = (id: string) => ({
    config: { webSearch: { baseUrl: api(id), ...(keys[id] ?? {}) } },
  });
  return parseConfig({
    tools: { web: { search: { cacheTtlMinutes: 0, ...search } } },
    plugins: {
      entries: {
        brave: entry("brave"),
        perplexity: entry("perplexity"),
        exa: entry("exa"),
        tavily: entry("tavily"),
        searxng: entry("searxng"),
      },
    },
  });
}

const keyEnv = (ids: (keyof typeof FAKE_SEARCH_KEYS)[]) =>
  Object.fromEntries(ids.map((id) => [`${id.toUpperCase()}_API_KEY`, FAKE_SEARCH_KEYS[id]]));

async function search(
  args: Record<string, unknown>,
  config = configFor({ provider: "brave" }),
  env: Record<string, unknown> = keyEnv(["brave"]),
) {
  const tools = createToolset(config, "main", { env });
  const ctx = toolContext({ config, env: { ...toolContext().env, ...env } });
  return runTool(tools, { name: "web_search", arguments: args }, ctx);
}

const parse = (content: string) => JSON.parse(content) as SearchOutput;

async function requests(): Promise<Recorded[]> {
  const res = await fetch(`${fakeWebUrl()}/_control/requests`);
  const all = (await res.json()) as Recorded[];
  return all.filter((r) => r.path.startsWith("/search-api/"));
}

beforeEach(async () => {
  await fetch(`${fakeWebUrl()}/_control/reset`, { method: "POST", body: "{}" });
});

describe("web_search: which provider, and whether the tool is offered", () => {
  const names = (config: ReturnType<typeof configFor>, env: Record<string, unknown>) =>
    createToolset(config, "main", { env }).map((tool) => tool.name);

  it("is not offered when no provider has a credential (the defaults a user gets)", () => {
    expect(names(parseConfig({}), {})).not.toContain("web_search");
    expect(names(parseConfig({}), { UNRELATED: "x" })).not.toContain("web_search");
  });

  it("auto-detects in OpenClaw's order: Brave before Perplexity, Exa, Tavily, then SearXNG", () => {
    const description = (env: Record<string, unknown>, config = parseConfig({})) =>
      createToolset(config, "main", { env }).find((t) => t.name === "web_search")?.description;
    expect(description(keyEnv(["tavily", "brave"]))).toContain("Brave Search");
    expect(description(keyEnv(["tavily", "exa"]))).toContain("Exa");
    expect(description(keyEnv(["tavily"]))).toContain("Tavily");
    expect(description({ SEARXNG_BASE_URL: "http://127.0.0.1:1" })).toContain("SearXNG");
    // A key in the config file counts as much as one in the env.
    expect(
      description(
        {},
        parseConfig({
          plugins: { entries: { perplexity: { config: { webSearch: { apiKey: "pplx-x" } } } } },
        }),
      ),
    ).toContain("Perplexity");
  });

  it("shows the model only the parameters its provider accepts", () => {
    const params = (provider: string, env: Record<string, unknown>) => {
      const tool = createToolset(configFor({ provider }), "main", { env }).find(
        (t) => t.name === "web_search",
      );
      if (!tool) throw new Error(`web_search not offered for ${provider}`);
      return Object.keys((tool.parameters as { properties: Record<string, unknown> }).properties);
    };
    expect(params("brave", keyEnv(["brave"]))).toEqual(
      expect.arrayContaining(["query", "count", "country", "freshness", "ui_lang"]),
    );
    expect(params("brave", keyEnv(["brave"]))).not.toContain("domain_filter");
    expect(params("tavily", keyEnv(["tavily"]))).toEqual(["query", "count"]);
    expect(params("perplexity", keyEnv(["perplexity"]))).toContain("domain_filter");
  });

  it("tools.web.search.enabled: false removes it whatever is configured", () => {
    expect(
      names(configFor({ enabled: false, provider: "brave" }), keyEnv(["brave"])),
    ).not.toContain("web_search");
  });

  it("an explicitly chosen provider without its key is offered and says exactly what is missing, calling nobody", async () => {
    const result = await search({ query: "otters" }, configFor({ provider: "exa" }), {});
    expect(result.isError).toBe(true);
    const output = parse(result.content);
    expect(output).toMatchObject({ kind: "error", provider: "exa", error: "provider_error" });
    expect(output.message).toContain("EXA_API_KEY");
    expect(output.message).toContain("plugins.entries.exa.config.webSearch.apiKey");
    expect(await requests()).toEqual([]);
  });
});

describe("web_search: each provider's wire format", () => {
  it("Brave: GET with the subscription token, count, country, language and freshness; rows normalised", async () => {
    const result = await search({
      query: "river otters",
      count: 3,
      country: "de",
      language: "de",
      freshness: "week",
    });
    expect(result.isError).toBeUndefined();
    const output = parse(result.content);
    expect(output).toMatchObject({
      kind: "results",
      provider: "brave",
      query: "river otters",
      count: 3,
    });
    expect(output.results[0]).toEqual({
      title: "Result 1 for river otters",
      url: "https://example.org/river-otters/1",
      published: "2026-11-01T08:00:00",
      siteName: "Example Org",
    });
    expect(output.externalContent).toEqual({
      untrusted: true,
      source: "web_search",
      wrapped: true,
      provider: "brave",
    });
    expect(output.text).toMatch(/^<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>/);
    expect(output.text).toContain("Snippet 2 about river otters.");
    const [sent] = await requests();
    const url = new URL(sent!.path, "http://x");
    expect(url.pathname).toBe("/search-api/brave/res/v1/web/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      q: "river otters",
      count: "3",
      country: "DE",
      search_lang: "de",
      freshness: "pw",
    });
    expect(sent!.headers["x-subscription-token"]).toBe(FAKE_SEARCH_KEYS.brave);
  });

  it("Brave: a date range becomes its custom freshness; date_before alone is refused before any call", async () => {
    await search({ query: "climate", date_after: "2024-01-01", date_before: "2024-06-30" });
    const [sent] = await requests();
    expect(new URL(sent!.path, "http://x").searchParams.get("freshness")).toBe(
      "2024-01-01to2024-06-30",
    );
    const refused = await search({ query: "climate", date_before: "2024-06-30" });
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain("date_before needs date_after");
    expect(await requests()).toHaveLength(1);
  });

  it("Perplexity: POST /search with Bearer, its filter names and month/day/year dates", async () => {
    const config = configFor({ provider: "perplexity" });
    const result = await search(
      {
        query: "product reviews",
        count: 2,
        domain_filter: ["-reddit.com"],
        date_after: "2026-03-05",
        language: "en",
      },
      config,
      keyEnv(["perplexity"]),
    );
    expect(parse(result.content)).toMatchObject({ provider: "perplexity", count: 2 });
    const [sent] = await requests();
    expect(sent!.headers.authorization).toBe(`Bearer ${FAKE_SEARCH_KEYS.perplexity}`);
    expect(JSON.parse(sent!.body!)).toEqual({
      query: "product reviews",
      max_results: 2,
      search_language_filter: ["en"],
      search_after_date_filter: "3/5/2026",
      search_domain_filter: ["-reddit.com"],
    });
    const mixed = await search(
      { query: "x", domain_filter: ["nature.com", "-reddit.com"] },
      config,
      keyEnv(["perplexity"]),
    );
    expect(mixed.content).toContain("either an allowlist or a denylist");
  });

  it("Exa: POST /search with x-api-key, numResults, highlights, and freshness as a start date", async () => {
    const result = await search(
      { query: "transformers", freshness: "day", type: "neural" },
      configFor({ provider: "exa" }),
      keyEnv(["exa"]),
    );
    const output = parse(result.content);
    expect(output).toMatchObject({ provider: "exa", count: 5 });
    expect(output.text).toContain("Snippet 1 about transformers.");
    const [sent] = await requests();
    expect(sent!.headers["x-api-key"]).toBe(FAKE_SEARCH_KEYS.exa);
    const body = JSON.parse(sent!.body!) as Record<string, unknown>;
    expect(body).toMatchObject({
      query: "transformers",
      numResults: 5,
      type: "neural",
      contents: { highlights: true },
    });
    const since = Date.parse(String(body.startPublishedDate));
    expect(Date.now() - since).toBeGreaterThan(86_000_000);
    expect(Date.now() - since).toBeLessThan(87_000_000);
  });

  it("Tavily: POST /search with Bearer and max_results; any other option is refused without a call", async () => {
    const config = configFor({ provider: "tavily", maxResults: 4 });
    const result = await search({ query: "otters" }, config, keyEnv(["tavily"]));
    expect(parse(result.content)).toMatchObject({ provider: "tavily", count: 4 });
    const [sent] = await requests();
    expect(sent!.headers.authorization).toBe(`Bearer ${FAKE_SEARCH_KEYS.tavily}`);
    expect(JSON.parse(sent!.body!)).toEqual({
      query: "otters",
      max_results: 4,
      search_depth: "basic",
    });
    const refused = await search({ query: "otters", country: "US" }, config, keyEnv(["tavily"]));
    expect(refused.isError).toBe(true);
    expect(refused.content).toBe(
      "web_search (tavily) does not take country; it accepts query, count",
    );
    expect(await requests()).toHaveLength(1);
  });

  it("SearXNG: GET /search?format=json with categories; an empty narrow category falls back to general once", async () => {
    const config = configFor({ provider: "searxng" });
    const result = await search({ query: "nonews", categories: "news" }, config, {});
    const output = parse(result.content);
    expect(output).toMatchObject({ provider: "searxng", count: 3 });
    expect(output.results[0]!.siteName).toBe("duckduckgo");
    const sent = await requests();
    expect(sent.map((r) => new URL(r.path, "http://x").searchParams.get("categories"))).toEqual([
      "news",
      "general",
    ]);
    expect(new URL(sent[0]!.path, "http://x").searchParams.get("format")).toBe("json");
  });
});

describe("web_search: what a hostile or failing provider gets", () => {
  it("provider text cannot forge a fence or a system line, and non-http URLs are dropped", async () => {
    const output = parse((await search({ query: "inject" })).content);
    expect(output.results.map((r) => r.url)).not.toContain("javascript:alert(1)");
    expect(output.results[0]!.url).toBe("https://evil.example/page");
    const fences = output.text.match(/<<<(END_)?EXTERNAL_UNTRUSTED_CONTENT/g) ?? [];
    expect(fences).toHaveLength(2); // only the real start and end
    expect(output.text).not.toContain('id="0000"');
    expect(output.text).not.toContain("<|im_start|>");
    expect(output.text).not.toMatch(/^System:/m);
    expect(JSON.stringify(output.results)).not.toContain("EXTERNAL_UNTRUSTED");
  });

  it("a refused key is reported as such, and the key never appears in the result", async () => {
    const result = await search({ query: "otters" }, configFor({ provider: "brave" }), {
      BRAVE_API_KEY: "wrong-key-123",
    });
    expect(result.isError).toBe(true);
    expect(result.content).toBe("web_search (brave): the provider refused the API key (HTTP 401)");
    expect(result.content).not.toContain("wrong-key-123");
  });

  it("rate limits, redirects, oversized and slow answers are clear errors", async () => {
    expect((await search({ query: "ratelimit" })).content).toBe(
      "web_search (brave): rate limited (HTTP 429), retry after 7 s",
    );
    expect((await search({ query: "redirect" })).content).toContain(
      "answered a redirect (HTTP 302)",
    );
    expect((await search({ query: "huge" })).content).toContain("larger than 2000000 bytes");
    const slow = await search(
      { query: "slow" },
      configFor({ provider: "brave", timeoutSeconds: 1 }),
    );
    expect(slow.content).toContain("no answer within 1 s (tools.web.search.timeoutSeconds)");
  });

  it("a plain-http base URL on a public host is refused before any call; loopback is allowed", async () => {
    const config = parseConfig({
      tools: { web: { search: { provider: "brave", cacheTtlMinutes: 0 } } },
      plugins: {
        entries: { brave: { config: { webSearch: { baseUrl: "http://93.184.216.34" } } } },
      },
    });
    const result = await search({ query: "otters" }, config);
    expect(result.content).toContain("must use https://");
    expect(await requests()).toEqual([]);
  });

  it("bad arguments are refused with the field named, and change nothing", async () => {
    const result = await search({ query: "otters", date_after: "2024-13-45" });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("date_after");
    expect((await search({ query: "" })).content).toContain("query");
    expect(await requests()).toEqual([]);
  });
});

describe("web_search: cache", () => {
  it("reuses a result for cacheTtlMinutes per query and options, with a fresh fence id", async () => {
    const config = configFor({ provider: "brave", cacheTtlMinutes: 15 });
    const query = `cache-${crypto.randomUUID()}`;
    const first = parse((await search({ query }, config)).content);
    const second = parse((await search({ query }, config)).content);
    expect(first.cached).toBeUndefined();
    expect(second.cached).toBe(true);
    expect(second.results).toEqual(first.results);
    expect(second.text.slice(0, 60)).not.toBe(first.text.slice(0, 60));
    await search({ query, count: 2 }, config);
    expect(await requests()).toHaveLength(2); // the second call was served from the cache; count 2 was not
  });
});
