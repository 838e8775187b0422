import type { KeyDocs } from "./jsdoc-index.ts";

/**
 * Walks a zod v4 schema into one row per config key: its path, its type in words, its default and
 * what its author wrote about it. Reads zod's own definitions (`_zod.def`), the structure every zod
 * v4 schema carries, so the rows are the schema the config loader runs, not a copy of it.
 */

interface ZodNode {
  _zod: { def: ZodDef };
}
interface ZodDef {
  type: string;
  innerType?: ZodNode;
  defaultValue?: unknown;
  in?: ZodNode;
  out?: ZodNode;
  getter?: () => ZodNode;
  shape?: Record<string, ZodNode>;
  element?: ZodNode;
  valueType?: ZodNode;
  options?: ZodNode[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  format?: string;
  checks?: Array<{ _zod: { def: CheckDef } }>;
  catchall?: ZodNode;
}
interface CheckDef {
  check: string;
  error?: (issue: unknown) => unknown;
  value?: number;
  inclusive?: boolean;
  format?: string;
  minimum?: number;
  maximum?: number;
}

export interface KeyRow {
  path: string;
  type: string;
  default?: string;
  description?: string;
}

interface Unwrapped {
  node: ZodNode;
  /** What the schema's own rules (`.refine`) say when a value breaks them. */
  rules: string[];
  defaultValue?: unknown;
  hasDefault: boolean;
  nullable: boolean;
}

const def = (node: ZodNode): ZodDef => node._zod.def;

/** Peels optional, default, prefault, nullable, readonly, catch, lazy and pipes off a schema. */
function unwrap(start: ZodNode): Unwrapped {
  let node = start;
  let defaultValue: unknown;
  let hasDefault = false;
  let nullable = false;
  const rules: string[] = [];
  for (;;) {
    const d = def(node);
    for (const check of d.checks ?? []) {
      const rule = customRule(check._zod.def);
      if (rule && !rules.includes(rule)) rules.push(rule);
    }
    if (d.type === "default" || d.type === "prefault") {
      if (!hasDefault) {
        defaultValue = d.defaultValue;
        hasDefault = true;
      }
      node = d.innerType!;
    } else if (d.type === "nullable") {
      nullable = true;
      node = d.innerType!;
    } else if (["optional", "nonoptional", "readonly", "catch"].includes(d.type)) {
      node = d.innerType!;
    } else if (d.type === "lazy") {
      node = d.getter!();
    } else if (d.type === "pipe") {
      // z.preprocess(fn, schema) is pipe(transform, schema); schema.transform(fn) is pipe(schema, transform).
      node = def(d.in!).type === "transform" ? d.out! : d.in!;
    } else {
      return { node, defaultValue, hasDefault, nullable, rules };
    }
  }
}

/** The message of a `.refine` rule, when it has a fixed one. */
function customRule(check: CheckDef): string | undefined {
  if (check.check !== "custom" || typeof check.error !== "function") return undefined;
  try {
    const said = check.error({});
    const text = typeof said === "string" ? said : (said as { message?: unknown })?.message;
    return typeof text === "string" && text ? text : undefined;
  } catch {
    return undefined;
  }
}

function numberWords(d: ZodDef): string {
  let integer = false;
  let low: string | undefined;
  let high: string | undefined;
  for (const check of d.checks ?? []) {
    const c = check._zod.def;
    if (c.check === "number_format" && /int/.test(c.format ?? "")) integer = true;
    if (c.check === "greater_than") low = `${c.inclusive ? "≥" : ">"} ${c.value}`;
    if (c.check === "less_than") high = `${c.inclusive ? "≤" : "<"} ${c.value}`;
  }
  const name = integer || /int/.test(d.format ?? "") ? "integer" : "number";
  if (low?.startsWith("≥") && high?.startsWith("≤"))
    return `${name} ${low.slice(2)}–${high.slice(2)}`;
  return [name, low, high].filter(Boolean).join(" ");
}

function isSecretRef(node: ZodNode): boolean {
  const d = def(node);
  return d.type === "object" && Object.keys(d.shape ?? {}).join(",") === "source,id,provider";
}

/** A schema's type in a few words (objects say "object"; their keys get rows of their own). */
export function typeWords(start: ZodNode): string {
  const { node, nullable } = unwrap(start);
  const d = def(node);
  let words: string;
  switch (d.type) {
    case "string":
      words = d.format === "url" ? "URL" : "string";
      break;
    case "number":
    case "int":
      words = numberWords(d);
      break;
    case "boolean":
      words = "boolean";
      break;
    case "enum":
      words = Object.values(d.entries ?? {})
        .map((v) => JSON.stringify(v))
        .join(" \\| ");
      break;
    case "literal":
      words = (d.values ?? []).map((v) => JSON.stringify(v)).join(" \\| ");
      break;
    case "union": {
      const options = d.options ?? [];
      if (options.length === 2 && options.some(isSecretRef)) words = "secret (string or SecretRef)";
      else words = [...new Set(options.map(typeWords))].join(" or ");
      break;
    }
    case "array":
      words = `list of ${typeWords(d.element!)}`;
      break;
    case "record":
      words = `map of ${typeWords(d.valueType!)}`;
      break;
    case "object":
      words = isSecretRef(node) ? "SecretRef" : "object";
      break;
    case "unknown":
    case "any":
      words = "any";
      break;
    default:
      words = d.type;
  }
  return nullable ? `${words} or null` : words;
}

function defaultWords(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (value !== null && typeof value === "object" && Object.keys(value).length === 0)
    return Array.isArray(value) ? "[]" : undefined; // {} only means "the keys' own defaults"
  return JSON.stringify(value);
}

/** The object schemas a node holds its keys in: itself, or a union's object members. */
function objectsOf(node: ZodNode): ZodNode[] {
  const d = def(node);
  if (d.type === "object" && !isSecretRef(node)) return [node];
  if (d.type === "union")
    return (d.options ?? []).flatMap((option) => objectsOf(unwrap(option).node));
  return [];
}

function compositeChild(node: ZodNode): { suffix: string; node: ZodNode } | undefined {
  const d = def(node);
  if (d.type === "array") return { suffix: "[]", node: unwrap(d.element!).node };
  if (d.type === "record") return { suffix: ".<id>", node: unwrap(d.valueType!).node };
  return undefined;
}

const ACCOUNT_NOTE = (channelPath: string): string =>
  `One block per account id, with the keys of \`${channelPath}\` (an account inherits the keys it does not set; see the channel's page). Only keys the channel block does not have, or that have a default of their own here, are listed below.`;

export function keyRows(schema: ZodNode, prefix: string, docs: KeyDocs): KeyRow[] {
  const rows: KeyRow[] = [];
  const seen = new Set<string>();
  const push = (row: KeyRow): void => {
    if (seen.has(row.path)) return;
    seen.add(row.path);
    rows.push(row);
  };
  const walkObject = (object: ZodNode, path: string, parentRows?: Map<string, KeyRow>): void => {
    const shape = def(object).shape ?? {};
    const shapeKeys = new Set(Object.keys(shape));
    const mine = new Map<string, KeyRow>();
    for (const [key, child] of Object.entries(shape)) {
      const unwrapped = unwrap(child);
      const rules = unwrapped.rules.map(
        (rule) => `A value that breaks its rule is refused with "${rule}".`,
      );
      const description = [docs.describe(key, shapeKeys), ...rules].filter(Boolean).join(" ");
      mine.set(key, {
        path: path ? `${path}.${key}` : key,
        type: typeWords(child),
        default: unwrapped.hasDefault ? defaultWords(unwrapped.defaultValue) : undefined,
        description: description || undefined,
      });
    }
    for (const [key, child] of Object.entries(shape)) {
      const row = mine.get(key)!;
      const node = unwrap(child).node;
      // An account block repeats its channel's keys without defaults: those rows add nothing.
      const objects = objectsOf(node);
      const composite = compositeChild(node);
      if (parentRows?.has(key) && (objects.length > 0 || composite || !row.default)) continue;
      if (objects.length === 0 || row.description || composite) push(row);
      for (const inner of objects) walkObject(inner, row.path);
      if (composite) {
        // `accounts.<id>` takes its channel's keys: only what the channel block lacks is listed.
        const parent = key === "accounts" && composite.suffix === ".<id>" ? mine : undefined;
        if (parent) row.description ??= ACCOUNT_NOTE(path);
        for (const inner of objectsOf(composite.node))
          walkObject(inner, `${row.path}${composite.suffix}`, parent);
      }
    }
  };
  for (const object of objectsOf(unwrap(schema).node)) walkObject(object, prefix);
  return rows;
}
