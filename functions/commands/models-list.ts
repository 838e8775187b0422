import type { EdgeclawConfig } from "../config/schema.ts";
import { modelAliases, modelChoices } from "./models.ts";

/**
 * `/models [provider] [page] [limit=<n>|all]` (tools/slash-commands): without a provider, the
 * providers the config names and how many models each lists; with one, its models a page at a
 * time, marked with the session's current model, aliases, and what each declares (image input,
 * reasoning, context window). Config only: no provider is called.
 */
const PAGE_SIZE = 20;

export function modelsCommand(args: string, config: EdgeclawConfig, current: string): string {
  const tokens = args.trim().split(/\s+/).filter(Boolean);
  let limit = PAGE_SIZE;
  let page = 1;
  let provider: string | undefined;
  for (const token of tokens) {
    const limitMatch = /^limit=(\d+|all)$/i.exec(token);
    if (limitMatch)
      limit =
        limitMatch[1]!.toLowerCase() === "all" ? Number.MAX_SAFE_INTEGER : Number(limitMatch[1]);
    else if (/^\d+$/.test(token)) page = Number(token);
    else if (!provider) provider = token.toLowerCase();
    else return "Usage: /models [provider] [page] [limit=<n>|all]";
  }
  if (limit < 1 || page < 1) return "Usage: /models [provider] [page] [limit=<n>|all]";
  const refs = modelChoices(config);
  const byProvider = new Map<string, string[]>();
  for (const ref of refs) {
    const id = ref.slice(0, ref.indexOf("/")).toLowerCase();
    byProvider.set(id, [...(byProvider.get(id) ?? []), ref]);
  }
  if (!provider) {
    if (byProvider.size === 0)
      return "No models configured: set agents.defaults.model.primary or list models under models.providers.";
    return [
      "Providers:",
      ...[...byProvider].map(
        ([id, list]) => `• ${id} (${list.length} model${list.length === 1 ? "" : "s"})`,
      ),
      `Current: ${current}. See one with /models <provider>; pick with /model <name>.`,
    ].join("\n");
  }
  const list = byProvider.get(provider);
  if (!list)
    return `No provider "${provider}" in the config. Providers: ${[...byProvider.keys()].join(", ") || "none"}.`;
  const pages = Math.max(1, Math.ceil(list.length / limit));
  if (page > pages)
    return `Page ${page} is past the end: ${provider} has ${pages} page${pages === 1 ? "" : "s"}.`;
  const aliases = new Map([...modelAliases(config)].map(([alias, ref]) => [ref, alias]));
  const shown = list.slice((page - 1) * limit, page * limit);
  return [
    `Models of ${provider} (${list.length}${pages > 1 ? `, page ${page}/${pages}` : ""}):`,
    ...shown.map(
      (ref) => `• ${ref}${describe(config, ref, aliases.get(ref))}${ref === current ? " ✓" : ""}`,
    ),
    ...(page < pages ? [`More: /models ${provider} ${page + 1}`] : []),
  ].join("\n");
}

function describe(config: EdgeclawConfig, ref: string, alias: string | undefined): string {
  const slash = ref.indexOf("/");
  const entry = config.models.providers[ref.slice(0, slash)]?.models.find(
    (model) => model.id === ref.slice(slash + 1),
  );
  const facts = [
    ...(alias ? [`alias ${alias}`] : []),
    ...(entry?.input?.includes("image") ? ["images"] : []),
    ...(entry?.reasoning ? ["reasoning"] : []),
    ...(entry?.contextWindow ? [`${Math.round(entry.contextWindow / 1000)}k ctx`] : []),
  ];
  return facts.length ? ` (${facts.join(" · ")})` : "";
}
