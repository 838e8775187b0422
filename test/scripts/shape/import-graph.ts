/**
 * The project's import graph, read from the sources with the TypeScript parser (no type checking):
 * what the shape tests (layering, cycles, boundaries, unused exports) measure. Every import form
 * counts — static imports and re-exports, `import type`, `import("…")` in code and in type
 * positions — and each edge says whether it survives compilation. Under `verbatimModuleSyntax`
 * only `import type` / `export type` and `import("…")` types are erased; `import { type A }` stays
 * as a side-effect import, so it is a runtime edge.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { projectRoot } from "../helpers.ts";

export interface ImportEdge {
  /** Project-relative path of the importing file. */
  from: string;
  /** Project-relative path of the imported file, or the package name for a bare specifier. */
  to: string;
  specifier: string;
  /** Erased at compile time: nothing of it runs. */
  typeOnly: boolean;
  line: number;
  /** Names it takes: "*" for a namespace import, `export *` or a dynamic import; "default" too. */
  names: string[];
  /** `export … from`: the names pass through to whoever imports this file. */
  reexport: boolean;
  /**
   * `import("…")` or `require(…)` in code: the module loads when the call runs, not with the
   * importer (a bundle still holds it: esbuild inlines a dynamic import of a file it resolves).
   */
  dynamic: boolean;
}

/** The top folders that hold the project's own modules. */
export const SOURCE_ROOTS = [
  "workers",
  "durable-objects",
  "functions",
  "web",
  "scripts",
  "companion/src",
  "companion/test",
  "test",
  "bin",
];

const SOURCE_FILE = /\.(ts|mts|js|mjs)$/;

export function sourceFiles(roots: string[] = SOURCE_ROOTS): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (entry.name === "node_modules" || entry.name === "dist") return [];
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return SOURCE_FILE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
    });
  return roots
    .map((root) => join(projectRoot, root))
    .filter((dir) => existsSync(dir))
    .flatMap(walk)
    .map((path) => relative(projectRoot, path))
    .sort();
}

function resolveSpecifier(from: string, specifier: string): string {
  if (!specifier.startsWith(".")) {
    const parts = specifier.split("/");
    return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
  }
  const target = resolve(projectRoot, dirname(from), specifier);
  for (const candidate of [target, `${target}.ts`, join(target, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile())
      return relative(projectRoot, candidate);
  }
  return relative(projectRoot, target);
}

/** The imports one file's source names (exported for the tests of this reader). */
export function importsInSource(from: string, source: string): ImportEdge[] {
  const file = ts.createSourceFile(from, source, ts.ScriptTarget.Latest, true);
  const edges: ImportEdge[] = [];
  const add = (
    specifierNode: ts.Node,
    typeOnly: boolean,
    names: string[],
    reexport = false,
    dynamic = false,
  ): void => {
    if (!ts.isStringLiteralLike(specifierNode)) return;
    const specifier = specifierNode.text;
    const line = file.getLineAndCharacterOfPosition(specifierNode.getStart()).line + 1;
    edges.push({
      from,
      to: resolveSpecifier(from, specifier),
      specifier,
      typeOnly,
      line,
      names,
      reexport,
      dynamic,
    });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const names: string[] = [];
      if (clause?.name) names.push("default");
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push("*");
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements)
          names.push((element.propertyName ?? element.name).text);
      add(node.moduleSpecifier, clause?.isTypeOnly ?? false, names);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const names =
        clause && ts.isNamedExports(clause)
          ? clause.elements.map((element) => (element.propertyName ?? element.name).text)
          : ["*"];
      add(node.moduleSpecifier, node.isTypeOnly, names, true);
    } else if (ts.isImportEqualsDeclaration(node)) {
      const reference = node.moduleReference;
      if (ts.isExternalModuleReference(reference))
        add(reference.expression, node.isTypeOnly, ["*"]);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument)) {
        const qualifier = node.qualifier;
        const name = qualifier
          ? ts.isIdentifier(qualifier)
            ? qualifier.text
            : qualifier.left.getText()
          : "*";
        add(argument.literal, true, [name]);
      }
    } else if (ts.isCallExpression(node)) {
      const [first] = node.arguments;
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === "require";
      if ((isImport || isRequire) && first) add(first, false, ["*"], false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return edges;
}

export interface ImportGraph {
  files: string[];
  /** Outgoing edges per file (project files only as keys). */
  edges: Map<string, ImportEdge[]>;
}

export function importGraph(files: string[] = sourceFiles()): ImportGraph {
  const edges = new Map<string, ImportEdge[]>();
  for (const file of files)
    edges.set(file, importsInSource(file, readFileSync(join(projectRoot, file), "utf8")));
  return { files, edges };
}

/**
 * Everything `start` loads at run time (value edges only), itself included; packages by name. With
 * `lazy: false`, only what loads with it — not what a dynamic import loads when its call runs (what
 * loading the config costs a CLI command); by default everything a bundle of it holds.
 */
export function runtimeClosure(
  graph: ImportGraph,
  start: string,
  { lazy = true }: { lazy?: boolean } = {},
): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.pop()!;
    for (const edge of graph.edges.get(file) ?? []) {
      if (edge.typeOnly || (!lazy && edge.dynamic) || seen.has(edge.to)) continue;
      seen.add(edge.to);
      if (graph.edges.has(edge.to)) queue.push(edge.to);
    }
  }
  return seen;
}

/** The path of imports by which `start` reaches `target` at run time, for a failure message. */
export function runtimePath(
  graph: ImportGraph,
  start: string,
  target: string,
  { lazy = true }: { lazy?: boolean } = {},
): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (file === target) break;
    for (const edge of graph.edges.get(file) ?? []) {
      if (edge.typeOnly || (!lazy && edge.dynamic) || seen.has(edge.to)) continue;
      seen.add(edge.to);
      cameFrom.set(edge.to, file);
      queue.push(edge.to);
    }
  }
  if (!seen.has(target)) return [];
  const path = [target];
  while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
  return path;
}

/**
 * Groups of files that import each other, directly or around a circle (Tarjan's strongly connected
 * components), over every edge, types included; only groups of two or more files.
 */
export function importCycles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const edge of graph.edges.get(file) ?? []) {
      if (!graph.edges.has(edge.to)) continue;
      if (!index.has(edge.to)) {
        connect(edge.to);
        low.set(file, Math.min(low.get(file)!, low.get(edge.to)!));
      } else if (onStack.has(edge.to)) {
        low.set(file, Math.min(low.get(file)!, index.get(edge.to)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== file);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const file of graph.files) if (!index.has(file)) connect(file);
  return groups;
}

/** One edge as a failure message names it: `file:line → specifier`. */
export function describeEdge(edge: ImportEdge): string {
  return `${edge.from}:${edge.line} → ${edge.specifier}${edge.typeOnly ? " (type)" : ""}`;
}
