import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectRoot } from "../helpers.ts";
import {
  describeEdge,
  type ImportEdge,
  importGraph,
  importsInSource,
  sourceFiles,
} from "./import-graph.ts";

/**
 * What a user runs (`npx edgeclaw …`, `npm run dev`, the simulators, the benchmarks) is shipped
 * code: nothing under scripts/ or bin/ imports a test folder (test/, companion/test/), types
 * included. The fake platforms `simulate` plays live in each channel's folder
 * (functions/channels/<id>/simulate/, beside its simulator) and scripts/simulate/fakes/ for that
 * reason; tests import them from there, never the other way round.
 */
const SHIPPED = [
  "scripts",
  "bin",
  ...readdirSync(join(projectRoot, "functions/channels"))
    .map((entry) => `functions/channels/${entry}/simulate`)
    .filter((folder) => existsSync(join(projectRoot, folder))),
];

/** A project file inside a test folder: test/… or any …/test/… (companion/test/). */
function isTestFile(path: string): boolean {
  return path.startsWith("test/") || path.includes("/test/");
}

function testImports(edges: Iterable<ImportEdge>): ImportEdge[] {
  return [...edges].filter((edge) => edge.specifier.startsWith(".") && isTestFile(edge.to));
}

describe("shipped code imports no tests", () => {
  it("no file under scripts/, bin/ or a channel's simulate/ imports test/ or companion/test/", () => {
    const graph = importGraph(sourceFiles(SHIPPED));
    assert.ok(graph.files.length > 50, `read only ${graph.files.length} files`);
    const found = testImports([...graph.edges.values()].flat());
    assert.deepEqual(found.map(describeEdge), []);
    assert.ok(
      graph.files.includes("functions/channels/slack/simulate/slack-api.ts"),
      "the fakes are read",
    );
  });

  it("the rule sees every import form that reaches a test folder", () => {
    const edges = importsInSource(
      "scripts/simulate/example.ts",
      [
        `import { a } from "../../test/fakes/model-server.ts";`,
        `import type { B } from "../../companion/test/helpers.ts";`,
        `const c = await import("../../test/setup/test-config.ts");`,
        `import { d } from "./fakes/slack-api.ts";`,
        `import { e } from "node:test";`,
      ].join("\n"),
    );
    assert.deepEqual(
      testImports(edges).map((edge) => edge.to),
      ["test/fakes/model-server.ts", "companion/test/helpers.ts", "test/setup/test-config.ts"],
    );
  });
});
