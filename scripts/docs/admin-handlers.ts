import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import ts from "typescript";

/**
 * What an admin route's handler reads, from its source: the query parameters (`c.req.query("x")`,
 * or the keys of a zod object it checks `c.req.query()` against) and whether it reads a JSON body
 * (`c.req.json()` directly or through a helper of the same file or imported from ours) with the
 * keys of the zod object it checks the body against, when that object is declared in the file or
 * imported from ours.
 */

export interface HandlerReads {
  query: string[];
  jsonBody: boolean;
  /** One key list per schema the body may be checked against (alternatives when several). */
  bodyKeys: string[][];
}

export function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
}

/** A top-level `const name = { … }` of the file: `z.object(fields)` is written that way too. */
function literalNamed(source: ts.SourceFile, name: string): ts.ObjectLiteralExpression | undefined {
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations)
      if (
        ts.isIdentifier(declaration.name) &&
        declaration.name.text === name &&
        declaration.initializer &&
        ts.isObjectLiteralExpression(declaration.initializer)
      )
        return declaration.initializer;
  }
  return undefined;
}

/** The first `z.object({…})` literal's keys inside an initializer, else undefined. */
function objectKeys(initializer: ts.Expression, source: ts.SourceFile): string[] | undefined {
  let found: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "object" &&
      node.arguments[0] &&
      (ts.isObjectLiteralExpression(node.arguments[0]) || ts.isIdentifier(node.arguments[0]))
    ) {
      const literal = ts.isIdentifier(node.arguments[0])
        ? literalNamed(source, node.arguments[0].text)
        : node.arguments[0];
      if (!literal) return;
      found = literal.properties.flatMap((p) =>
        p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : [],
      );
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(initializer);
  return found;
}

function declaredSchemas(source: ts.SourceFile, only?: Set<string>): Map<string, string[]> {
  const schemas = new Map<string, string[]>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name) || !declaration.initializer) continue;
      if (only && !only.has(declaration.name.text)) continue;
      const keys = objectKeys(declaration.initializer, source);
      if (keys) schemas.set(declaration.name.text, keys);
    }
  }
  return schemas;
}

/** Top-level zod object schemas of a file, and those it imports by name from a relative module. */
function schemasVisibleIn(file: string, source: ts.SourceFile): Map<string, string[]> {
  const schemas = declaredSchemas(source);
  for (const statement of source.statements) {
    const bindings = ts.isImportDeclaration(statement)
      ? statement.importClause?.namedBindings
      : undefined;
    if (
      !bindings ||
      !ts.isNamedImports(bindings) ||
      !ts.isStringLiteral((statement as ts.ImportDeclaration).moduleSpecifier)
    )
      continue;
    const specifier = ((statement as ts.ImportDeclaration).moduleSpecifier as ts.StringLiteral)
      .text;
    const names = new Set(
      bindings.elements.map((e) => e.name.text).filter((n) => /(Schema|Body)$/.test(n)),
    );
    if (!specifier.startsWith(".") || names.size === 0) continue;
    for (const [name, keys] of declaredSchemas(parse(resolve(dirname(file), specifier)), names))
      schemas.set(name, keys);
  }
  return schemas;
}

/** Top-level functions of a file whose body reads the JSON body, e.g. a shared `readJson`. */
function declaredJsonReaders(source: ts.SourceFile): string[] {
  return source.statements.flatMap((statement) =>
    ts.isFunctionDeclaration(statement) &&
    statement.name &&
    /req\.json\(/.test(statement.getText(source))
      ? [statement.name.text]
      : [],
  );
}

/** The file's own JSON-reading helpers, and those it imports by name from a relative module. */
function jsonReaders(file: string, source: ts.SourceFile): string[] {
  const readers = declaredJsonReaders(source);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier))
      continue;
    const bindings = statement.importClause?.namedBindings;
    const specifier = statement.moduleSpecifier.text;
    if (!bindings || !ts.isNamedImports(bindings) || !specifier.startsWith(".")) continue;
    const imported = new Set(bindings.elements.map((e) => e.name.text));
    const declared = declaredJsonReaders(parse(resolve(dirname(file), specifier)));
    readers.push(...declared.filter((name) => imported.has(name)));
  }
  return readers;
}

/**
 * A reader for the handlers of one file. `word` is the loop word a route was expanded from
 * (`for (const action of ["raise", "reset"])`): of several schemas a handler names, the one named
 * after the word is that route's (raiseSchema for raise); without one they are listed as
 * alternatives.
 */
export function handlerReader(
  file: string,
  source: ts.SourceFile,
): (handler: string, word?: string) => HandlerReads {
  const schemas = schemasVisibleIn(file, source);
  const readers = jsonReaders(file, source);
  return (handler, word) => {
    let named = [...new Set(handler.match(/\b\w+\b/g) ?? [])].filter((w) => schemas.has(w));
    const own = word ? named.filter((w) => w.toLowerCase().startsWith(word.toLowerCase())) : [];
    if (own.length) named = own;
    const queryParsers = named.filter((w) =>
      new RegExp(`\\b${w}\\.safeParse\\(\\s*c\\.req\\.query\\(\\s*\\)`).test(handler),
    );
    const jsonBody =
      /req\.json\(/.test(handler) ||
      readers.some((name) => new RegExp(`\\b${name}\\(`).test(handler));
    const query = [
      ...[...handler.matchAll(/req\.query\(\s*"([^"]+)"/g)].map((m) => m[1]!),
      ...queryParsers.flatMap((w) => schemas.get(w)!),
    ];
    const bodyKeys = jsonBody
      ? named.filter((w) => !queryParsers.includes(w)).map((w) => schemas.get(w)!)
      : [];
    return { query: [...new Set(query)], jsonBody, bodyKeys };
  };
}
