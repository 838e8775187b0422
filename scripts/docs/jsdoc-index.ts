import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/**
 * The `/** … *\/` comments written above object-literal properties in the source under a folder,
 * so the generated config reference can show what a key's author wrote about it. A zod schema at
 * run time no longer knows which literal built it; `describe` matches a key by its name and the
 * names of the literal's other properties, which must all be keys of the same schema object.
 */

interface DocumentedProperty {
  keys: ReadonlySet<string>;
  doc: string;
}

export class KeyDocs {
  private readonly byKey = new Map<string, DocumentedProperty[]>();

  add(key: string, entry: DocumentedProperty): void {
    const list = this.byKey.get(key) ?? [];
    list.push(entry);
    this.byKey.set(key, list);
  }

  /** The comment on `key` from the largest literal whose every property is a key of `shapeKeys`. */
  describe(key: string, shapeKeys: ReadonlySet<string>): string | undefined {
    let best: DocumentedProperty | undefined;
    for (const entry of this.byKey.get(key) ?? []) {
      if (![...entry.keys].every((k) => shapeKeys.has(k))) continue;
      if (!best || entry.keys.size > best.keys.size) best = entry;
    }
    return best?.doc;
  }
}

function typescriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name))
    return name.text;
  return undefined;
}

/** The JSDoc text directly above a node, on one line. */
function jsDocText(node: ts.Node, source: ts.SourceFile): string | undefined {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
  if (!docs?.length) return undefined;
  const raw = docs[docs.length - 1]!.getText(source);
  const text = raw
    .replace(/^\/\*\*/, "")
    .replace(/\*\/$/, "")
    .split("\n")
    .map((line) => line.replace(/^\s*\* ?/, ""))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  return text || undefined;
}

/** The zod-using TypeScript files under `dirs`, sorted. */
export function schemaFiles(dirs: string[]): string[] {
  return dirs
    .flatMap(typescriptFiles)
    .filter((file) => readFileSync(file, "utf8").includes('from "zod"'))
    .sort();
}

/** The documented properties of one file, parsed once per process (keyDocs is called per channel). */
const parsedFiles = new Map<string, Array<{ key: string; entry: DocumentedProperty }>>();

function documentedProperties(file: string): Array<{ key: string; entry: DocumentedProperty }> {
  const cached = parsedFiles.get(file);
  if (cached) return cached;
  const found: Array<{ key: string; entry: DocumentedProperty }> = [];
  const source = ts.createSourceFile(
    file,
    readFileSync(file, "utf8"),
    ts.ScriptTarget.Latest,
    true,
  );
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const keys = new Set<string>();
      for (const property of node.properties) {
        if (
          (ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property)) &&
          propertyName(property.name) !== undefined
        )
          keys.add(propertyName(property.name)!);
      }
      for (const property of node.properties) {
        if (!ts.isPropertyAssignment(property)) continue;
        const key = propertyName(property.name);
        const doc = key === undefined ? undefined : jsDocText(property, source);
        if (key !== undefined && doc !== undefined) found.push({ key, entry: { keys, doc } });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  parsedFiles.set(file, found);
  return found;
}

/** Every documented property of every object literal in `files`. */
export function keyDocs(files: string[]): KeyDocs {
  const index = new KeyDocs();
  for (const file of files)
    for (const { key, entry } of documentedProperties(file)) index.add(key, entry);
  return index;
}
