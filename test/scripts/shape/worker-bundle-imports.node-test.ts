import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  describeEdge,
  type ImportGraph,
  importGraph,
  importsInSource,
  runtimeClosure,
} from "./import-graph.ts";

/**
 * Import forms that cost the Worker's bundle more than the code they use. zod 4 exports its API
 * both as named exports and as the namespace object `z`, which also carries `z.locales`: every
 * error-message locale zod ships. `import { z } from "zod"` hands esbuild (wrangler's bundler) that
 * object as a value, so it keeps all of it — 262 KiB of locales, 68 KiB of the gzipped Worker,
 * measured when the imports changed. `import * as z from "zod"` lets esbuild resolve each `z.string`
 * to its own export and drop the rest; English messages stay (zod registers its default locale
 * when the first schema is built).
 */
function namedZodImports(graph: ImportGraph, files: string[]): string[] {
  return files.flatMap((file) =>
    (graph.edges.get(file) ?? [])
      .filter((edge) => edge.to === "zod" && !edge.typeOnly && !edge.names.includes("*"))
      .map(describeEdge),
  );
}

describe("Worker bundle import forms", () => {
  it("nothing the Worker loads imports zod by name: a namespace import, so the locales stay out", () => {
    const graph = importGraph();
    const closure = [...runtimeClosure(graph, "workers/index.ts")].filter((file) =>
      graph.edges.has(file),
    );
    assert.ok(closure.length > 100, "the closure reaches the Worker's modules");
    assert.deepEqual(namedZodImports(graph, closure), []);
  });

  it("the rule tells the two forms apart", () => {
    const named = importsInSource("x.ts", 'import { z } from "zod";\nz.string();');
    const namespace = importsInSource("y.ts", 'import * as z from "zod";\nz.string();');
    assert.deepEqual(
      named.filter((edge) => !edge.names.includes("*")).map((edge) => edge.to),
      ["zod"],
    );
    assert.deepEqual(
      namespace.filter((edge) => !edge.names.includes("*")),
      [],
    );
  });
});
