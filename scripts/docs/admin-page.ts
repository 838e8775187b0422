import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { channelIds } from "../../functions/channels/gateway-config.ts";
import ts from "typescript";
import { handlerReader, parse } from "./admin-handlers.ts";
import { pathToFileURL } from "node:url";
import { GENERATED_NOTE, tableCell } from "./markdown.ts";

/**
 * docs/reference/admin-api.md: every `/admin/*` route, read from the route declarations in
 * workers/admin*.ts and each channel's functions/channels/<id>/admin.ts (its `app`, mounted at
 * /admin/channels/<id>) — method, path, the query parameters and JSON body the handler reads, the
 * comment above it — and checked against the routes the Hono app really serves, so a route this
 * reader misses fails the generation instead of vanishing from the page.
 */

interface Route {
  method: string;
  path: string;
  file: string;
  query: string[];
  jsonBody: boolean;
  /** The keys of the zod object(s) the handler checks the JSON body against, when it names them. */
  bodyKeys: string[][];
  doc?: string;
}

const METHODS = new Set(["get", "post", "put", "patch", "delete"]);

function docOf(node: ts.Node, source: ts.SourceFile): string | undefined {
  const statement = ts.findAncestor(node, ts.isExpressionStatement);
  const docs = statement && (statement as { jsDoc?: ts.JSDoc[] }).jsDoc;
  if (!docs?.length) return undefined;
  return docs[docs.length - 1]!.getText(source)
    .replace(/^\/\*\*|\*\/$/g, "")
    .replace(/^\s*\* ?/gm, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The paths a route declaration names: a string, or a template over the variable of an enclosing
 * `for (const action of ["a", "b"])` (one route per word).
 */
function routePaths(
  arg: ts.Expression,
  source: ts.SourceFile,
): Array<{ path: string; word?: string }> {
  if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))
    return [{ path: arg.text }];
  if (!ts.isTemplateExpression(arg)) return [];
  const loop = ts.findAncestor(arg, ts.isForOfStatement);
  const declaration =
    loop && ts.isVariableDeclarationList(loop.initializer)
      ? loop.initializer.declarations[0]
      : undefined;
  let words = loop?.expression;
  while (words && (ts.isAsExpression(words) || ts.isParenthesizedExpression(words)))
    words = words.expression;
  if (
    !declaration ||
    !ts.isIdentifier(declaration.name) ||
    !words ||
    !ts.isArrayLiteralExpression(words)
  )
    throw new Error(`cannot read the route path ${arg.getText(source)}`);
  const variable = declaration.name.text;
  return words.elements.filter(ts.isStringLiteral).map((word) => ({
    word: word.text,
    path:
      arg.head.text +
      arg.templateSpans
        .map((span) => {
          if (!ts.isIdentifier(span.expression) || span.expression.text !== variable)
            throw new Error(`cannot read the route path ${arg.getText(source)}`);
          return word.text + span.literal.text;
        })
        .join(""),
  }));
}

/** `app.get("/x", …)` calls on the given Hono app variables, with the prefix each is mounted at. */
function routesIn(file: string, mounts: Map<string, string>): Route[] {
  const source = parse(file);
  const reads = handlerReader(file, source);
  const routes: Route[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ts.isIdentifier(node.expression.expression) &&
      mounts.has(node.expression.expression.text) &&
      METHODS.has(node.expression.name.text) &&
      node.arguments[0]
    ) {
      const prefix = mounts.get(node.expression.expression.text)!;
      const handler = node.arguments
        .slice(1)
        .map((a) => a.getText(source))
        .join("\n");
      for (const { path: sub, word } of routePaths(node.arguments[0], source))
        routes.push({
          method: node.expression.name.text.toUpperCase(),
          path: `/admin${prefix === "/" ? "" : prefix}${sub === "/" && prefix !== "/" ? "" : sub}`,
          file,
          ...reads(handler, word),
          doc: docOf(node, source),
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return routes;
}

/**
 * The routes the admin app serves. Imported by path at run time: the Worker's modules are typed
 * against the Workers runtime, which the Node-side typecheck of scripts/ does not load.
 */
async function servedRoutes(root: string): Promise<Set<string>> {
  const url = pathToFileURL(join(root, "workers", "admin.ts")).href;
  const { admin } = (await import(url)) as {
    admin: { routes: Array<{ method: string; path: string }> };
  };
  return new Set(
    admin.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => `${r.method} /admin${r.path === "/" ? "" : r.path}`),
  );
}

export async function adminRoutes(root: string): Promise<Route[]> {
  const adminFile = join(root, "workers", "admin.ts");
  const source = parse(adminFile);
  // Which file each imported app comes from, and where admin.ts mounts it.
  const importedFrom = new Map<string, string>();
  const mountsByFile = new Map<string, Map<string, string>>([
    [adminFile, new Map([["admin", "/"]])],
  ]);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier))
      continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements)
      importedFrom.set(
        element.name.text,
        resolve(dirname(adminFile), statement.moduleSpecifier.text),
      );
  }
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      node.expression.getText(source) === "admin.route" &&
      ts.isStringLiteral(node.arguments[0]!) &&
      ts.isIdentifier(node.arguments[1]!)
    ) {
      const app = (node.arguments[1] as ts.Identifier).text;
      const file = importedFrom.get(app);
      if (file) {
        const mounts = mountsByFile.get(file) ?? new Map<string, string>();
        mounts.set(app, (node.arguments[0] as ts.StringLiteral).text);
        mountsByFile.set(file, mounts);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // A channel's own routes: the `app` of its folder's admin.ts, mounted from its definition.
  for (const id of channelIds()) {
    const file = join(root, "functions", "channels", id, "admin.ts");
    if (existsSync(file)) mountsByFile.set(file, new Map([["app", `/channels/${id}`]]));
  }
  const routes = [...mountsByFile].flatMap(([file, mounts]) => routesIn(file, mounts));

  const served = await servedRoutes(root);
  const read = new Set(routes.map((r) => `${r.method} ${r.path}`));
  const missing = [...served].filter((r) => !read.has(r));
  const extra = [...read].filter((r) => !served.has(r));
  if (missing.length || extra.length)
    throw new Error(
      `admin routes read from the source differ from the served ones: missing ${missing.join(", ") || "none"}; not served ${extra.join(", ") || "none"}`,
    );
  return routes;
}

export async function adminReference(root: string): Promise<string> {
  const routes = (await adminRoutes(root)).sort(
    (a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method),
  );
  const rows = routes.map((route) => {
    const takes = [
      ...route.query.map((q) => `\`?${q}=\``),
      ...(route.jsonBody
        ? [
            route.bodyKeys.length
              ? `JSON ${route.bodyKeys.map((keys) => `\`{ ${keys.join(", ")} }\``).join(" or ")}`
              : "JSON body",
          ]
        : []),
    ].join(", ");
    const file = relative(root, route.file);
    return `| \`${route.method}\` | \`${route.path}\` | ${takes} | ${tableCell(route.doc ?? "")} | [${file}](../../${file}) |`;
  });
  return `# Admin API

${GENERATED_NOTE}

Every route under \`/admin\` takes \`Authorization: Bearer <gateway token>\` (\`gateway.auth.token\`,
else \`EDGECLAW_GATEWAY_TOKEN\` / \`OPENCLAW_GATEWAY_TOKEN\`); wrong tokens count toward the
failed-auth lockout (\`gateway.auth.rateLimit\`). Errors are JSON:
\`{ "error": { "message", "type": "admin_error", "code" } }\`. The [CLI](cli.md) and the
[control page](../concepts/control-page.md) are clients of this API.

| Method | Path | Reads | Notes | Source |
| --- | --- | --- | --- | --- |
${rows.join("\n")}
`;
}
