/**
 * Looks through a config as written for the secrets it needs: SecretRefs (`{ source: "env", id }`)
 * and `${VAR}` strings name Worker secrets the deploy must ask the user to set; plain strings under
 * secret-looking keys would be bundled into the Worker script, which deserves a warning.
 */

const SECRET_KEY = /(token|secret|password|apikey|api_key|privatekey)$/i;
const WHOLE_VAR = /^\$\{([A-Z0-9_]+)\}$/;

export function referencedSecretIds(raw: unknown): string[] {
  const ids = new Set<string>();
  walk(raw, [], (value) => {
    if (isSecretRef(value)) ids.add(value.id);
    if (typeof value === "string") {
      const match = WHOLE_VAR.exec(value);
      if (match) ids.add(match[1]!);
    }
  });
  return [...ids].sort();
}

/** Key paths whose value is a literal secret string (not a SecretRef, not `${VAR}`). */
export function plainSecretPaths(raw: unknown): string[] {
  const paths: string[] = [];
  walk(raw, [], (value, path) => {
    const key = path[path.length - 1];
    if (typeof value !== "string" || typeof key !== "string" || !SECRET_KEY.test(key)) return;
    if (value.length === 0 || WHOLE_VAR.test(value)) return;
    paths.push(path.join("."));
  });
  return paths;
}

function isSecretRef(value: unknown): value is { source: "env"; id: string } {
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  return record.source === "env" && typeof record.id === "string" && record.id.length > 0;
}

function walk(
  value: unknown,
  path: Array<string | number>,
  visit: (value: unknown, path: Array<string | number>) => void,
) {
  visit(value, path);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) walk(item, [...path, index], visit);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) walk(item, [...path, key], visit);
  }
}
