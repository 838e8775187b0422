import type { WebSearchProviderId, WebSearchSettings } from "../../config/web-search-schema.ts";
import { ToolInputError } from "./common.ts";

/**
 * The web_search providers: for each, how a normalised query becomes its HTTP request and how its
 * answer becomes result rows. Wire formats follow each provider's API reference; every base URL is
 * configurable (`plugins.entries.<id>.config.webSearch.baseUrl`).
 */

/** The tool's arguments after validation; which of them a provider accepts is in `accepts`. */
export interface SearchQuery {
  query: string;
  count: number;
  country?: string;
  language?: string;
  search_lang?: string;
  ui_lang?: string;
  freshness?: "day" | "week" | "month" | "year";
  date_after?: string;
  date_before?: string;
  domain_filter?: string[];
  max_tokens?: number;
  max_tokens_per_page?: number;
  type?: "auto" | "neural" | "fast" | "deep" | "deep-reasoning" | "instant";
  categories?: string;
}

export type SearchOption = Exclude<keyof SearchQuery, "query" | "count">;

/** One result row as the provider gave it, before sanitising and fencing. */
export interface RawResult {
  title: string;
  url: string;
  snippet?: string;
  published?: string;
  siteName?: string;
}

export interface ProviderRequest {
  url: string;
  init: RequestInit;
}

export interface SearchProvider {
  id: WebSearchProviderId;
  label: string;
  /** Env vars holding its credential (or, for SearXNG, its base URL), in the order they are read. */
  envKeys: readonly string[];
  defaultBaseUrl?: string;
  accepts: readonly SearchOption[];
  request(query: SearchQuery, auth: ProviderAuth, now: Date): ProviderRequest;
  results(body: unknown): RawResult[];
}

export interface ProviderAuth {
  baseUrl: string;
  apiKey?: string;
  settings: WebSearchSettings;
}

const json = (body: unknown, headers: Record<string, string>): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json", ...headers },
  body: JSON.stringify(body),
});

/** `base` with `path` appended once (a base that already ends in it is kept as it is). */
function endpoint(base: string, path: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith(path) ? trimmed : `${trimmed}${path}`;
}

const FRESHNESS_DAYS = { day: 1, week: 7, month: 31, year: 365 } as const;

function requireRange(query: SearchQuery, provider: string): void {
  if (query.freshness && (query.date_after || query.date_before))
    throw new ToolInputError(
      `web_search (${provider}): use freshness or date_after/date_before, not both`,
    );
}

const brave: SearchProvider = {
  id: "brave",
  label: "Brave Search",
  envKeys: ["BRAVE_API_KEY"],
  defaultBaseUrl: "https://api.search.brave.com",
  accepts: [
    "country",
    "language",
    "search_lang",
    "ui_lang",
    "freshness",
    "date_after",
    "date_before",
  ],
  request(query, auth, now) {
    requireRange(query, "brave");
    const url = new URL(endpoint(auth.baseUrl, "/res/v1/web/search"));
    url.searchParams.set("q", query.query);
    url.searchParams.set("count", String(query.count));
    if (query.country) url.searchParams.set("country", query.country.toUpperCase());
    const lang = query.search_lang ?? query.language;
    if (lang) url.searchParams.set("search_lang", lang);
    if (query.ui_lang) {
      if (!/^[a-z]{2,3}-[A-Za-z]{2,4}$/.test(query.ui_lang))
        throw new ToolInputError("web_search (brave): ui_lang needs a region subtag, e.g. en-US");
      url.searchParams.set("ui_lang", query.ui_lang);
    }
    const freshness = braveFreshness(query, now);
    if (freshness) url.searchParams.set("freshness", freshness);
    return {
      url: url.toString(),
      init: {
        method: "GET",
        headers: { accept: "application/json", "x-subscription-token": auth.apiKey ?? "" },
      },
    };
  },
  results(body) {
    const rows = record(record(body).web).results;
    return list(rows).map((row) => ({
      title: text(row.title),
      url: text(row.url),
      snippet: optionalText(row.description),
      published: optionalText(row.page_age),
      siteName:
        optionalText(record(row.profile).name) ?? optionalText(record(row.meta_url).hostname),
    }));
  },
};

/** Brave's freshness: pd/pw/pm/py, or a custom `YYYY-MM-DDtoYYYY-MM-DD` range (both ends required). */
function braveFreshness(query: SearchQuery, now: Date): string | undefined {
  if (query.freshness) return { day: "pd", week: "pw", month: "pm", year: "py" }[query.freshness];
  if (query.date_before && !query.date_after)
    throw new ToolInputError(
      "web_search (brave): date_before needs date_after too (Brave's custom range has both ends)",
    );
  if (!query.date_after) return undefined;
  return `${query.date_after}to${query.date_before ?? now.toISOString().slice(0, 10)}`;
}

const perplexity: SearchProvider = {
  id: "perplexity",
  label: "Perplexity Search",
  envKeys: ["PERPLEXITY_API_KEY"],
  defaultBaseUrl: "https://api.perplexity.ai",
  accepts: [
    "country",
    "language",
    "freshness",
    "date_after",
    "date_before",
    "domain_filter",
    "max_tokens",
    "max_tokens_per_page",
  ],
  request(query, auth) {
    requireRange(query, "perplexity");
    const domains = query.domain_filter ?? [];
    if (domains.length > 20)
      throw new ToolInputError("web_search (perplexity): domain_filter takes at most 20 domains");
    const denied = domains.filter((domain) => domain.startsWith("-"));
    if (denied.length > 0 && denied.length < domains.length)
      throw new ToolInputError(
        "web_search (perplexity): domain_filter is either an allowlist or a denylist (-domain), not both",
      );
    const body: Record<string, unknown> = { query: query.query, max_results: query.count };
    if (query.country) body.country = query.country.toUpperCase();
    if (query.language) body.search_language_filter = [query.language];
    if (query.freshness) body.search_recency_filter = query.freshness;
    if (query.date_after) body.search_after_date_filter = usDate(query.date_after);
    if (query.date_before) body.search_before_date_filter = usDate(query.date_before);
    if (domains.length > 0) body.search_domain_filter = domains;
    if (query.max_tokens !== undefined) body.max_tokens = query.max_tokens;
    if (query.max_tokens_per_page !== undefined)
      body.max_tokens_per_page = query.max_tokens_per_page;
    return {
      url: endpoint(auth.baseUrl, "/search"),
      init: json(body, { authorization: `Bearer ${auth.apiKey ?? ""}` }),
    };
  },
  results(body) {
    return list(record(body).results).map((row) => ({
      title: text(row.title),
      url: text(row.url),
      snippet: optionalText(row.snippet),
      published: optionalText(row.date) ?? optionalText(row.last_updated),
    }));
  },
};

/** Perplexity's date filters are written month/day/year. */
function usDate(isoDate: string): string {
  const [year, month, day] = isoDate.split("-");
  return `${Number(month)}/${Number(day)}/${year}`;
}

const exa: SearchProvider = {
  id: "exa",
  label: "Exa",
  envKeys: ["EXA_API_KEY"],
  defaultBaseUrl: "https://api.exa.ai",
  accepts: ["freshness", "date_after", "date_before", "type"],
  request(query, auth, now) {
    requireRange(query, "exa");
    const body: Record<string, unknown> = {
      query: query.query,
      numResults: query.count,
      type: query.type ?? "auto",
      contents: { highlights: true },
    };
    if (query.freshness) {
      const since = new Date(now.getTime() - FRESHNESS_DAYS[query.freshness] * 86_400_000);
      body.startPublishedDate = since.toISOString();
    }
    if (query.date_after) body.startPublishedDate = `${query.date_after}T00:00:00.000Z`;
    if (query.date_before) body.endPublishedDate = `${query.date_before}T23:59:59.999Z`;
    return {
      url: endpoint(auth.baseUrl, "/search"),
      init: json(body, { "x-api-key": auth.apiKey ?? "" }),
    };
  },
  results(body) {
    return list(record(body).results).map((row) => {
      const highlights = Array.isArray(row.highlights)
        ? row.highlights.filter((h): h is string => typeof h === "string")
        : [];
      return {
        title: text(row.title),
        url: text(row.url),
        // Highlights first, then the summary, then the page text, as OpenClaw describes.
        snippet:
          (highlights.length > 0 ? highlights.join(" … ") : undefined) ??
          optionalText(row.summary) ??
          optionalText(row.text)?.slice(0, 1000),
        published: optionalText(row.publishedDate),
      };
    });
  },
};

const tavily: SearchProvider = {
  id: "tavily",
  label: "Tavily",
  envKeys: ["TAVILY_API_KEY"],
  defaultBaseUrl: "https://api.tavily.com",
  // OpenClaw's web_search passes only query and count to Tavily.
  accepts: [],
  request(query, auth) {
    return {
      url: endpoint(auth.baseUrl, "/search"),
      init: json(
        { query: query.query, max_results: query.count, search_depth: "basic" },
        { authorization: `Bearer ${auth.apiKey ?? ""}` },
      ),
    };
  },
  results(body) {
    return list(record(body).results).map((row) => ({
      title: text(row.title),
      url: text(row.url),
      snippet: optionalText(row.content),
      published: optionalText(row.published_date),
    }));
  },
};

const searxng: SearchProvider = {
  id: "searxng",
  label: "SearXNG",
  envKeys: ["SEARXNG_BASE_URL"],
  accepts: ["language", "categories"],
  request(query, auth) {
    const url = new URL(endpoint(auth.baseUrl, "/search"));
    url.searchParams.set("q", query.query);
    url.searchParams.set("format", "json");
    url.searchParams.set("categories", query.categories ?? auth.settings.categories ?? "general");
    const language = query.language ?? auth.settings.language;
    if (language) url.searchParams.set("language", language);
    return {
      url: url.toString(),
      init: { method: "GET", headers: { accept: "application/json" } },
    };
  },
  results(body) {
    return list(record(body).results).map((row) => ({
      title: text(row.title),
      url: text(row.url),
      snippet: optionalText(row.content),
      published: optionalText(row.publishedDate),
      siteName: optionalText(row.engine),
    }));
  },
};

/** OpenClaw's auto-detect order among the providers built here (Brave 10 … SearXNG 200). */
export const SEARCH_PROVIDERS: readonly SearchProvider[] = [
  brave,
  perplexity,
  exa,
  tavily,
  searxng,
];

export function searchProvider(id: WebSearchProviderId): SearchProvider {
  const provider = SEARCH_PROVIDERS.find((candidate) => candidate.id === id);
  if (!provider) throw new Error(`unknown web_search provider ${id}`);
  return provider;
}

type Row = Record<string, unknown>;

function record(value: unknown): Row {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Row) : {};
}

function list(value: unknown): Row[] {
  return Array.isArray(value) ? value.map(record) : [];
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function optionalText(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value : undefined;
}
