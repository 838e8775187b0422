import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  describeEdge,
  type ImportEdge,
  type ImportGraph,
  importCycles,
  importGraph,
  importsInSource,
  runtimeClosure,
  runtimePath,
} from "./import-graph.ts";

/**
 * DESIGN "Arrows point down only": workers/ → durable-objects/ → functions/agent, routing, commands
 * → functions/channels, config, db. Nothing under functions/ or durable-objects/ imports workers/,
 * types included; what both need (the Env type, the ingest call) lives below them. Each failure
 * names the file, the line and the import that breaks the rule.
 */

/**
 * A folder's tier; an import may stay in its tier or go down, never up (types included). The
 * folders DESIGN does not name sit where their imports put them: automation and control are domain
 * code beside agent; http, logging, metrics and telemetry are helpers beside channels and db. The
 * config schema is the bottom of the domain: the channel registry extends it, so it imports no
 * channel, no routing and no db. functions/core/ is the floor under everything.
 */
const TIERS: Array<[tier: number, folders: string[]]> = [
  [5, ["workers"]],
  [4, ["durable-objects"]],
  [
    3,
    [
      "functions/agent",
      "functions/routing",
      "functions/commands",
      "functions/automation",
      "functions/control",
      "functions/sandbox",
      "functions/compute-env",
    ],
  ],
  [
    2,
    [
      "functions/channels",
      "functions/db",
      "functions/http",
      "functions/logging",
      "functions/media",
      "functions/metrics",
      "functions/telemetry",
    ],
  ],
  [1, ["functions/config"]],
  [0, ["functions/core"]],
];

function tierOf(file: string): number | undefined {
  for (const [tier, folders] of TIERS)
    if (folders.some((folder) => file === folder || file.startsWith(`${folder}/`))) return tier;
  return undefined;
}

/** A functions/ folder nobody placed yet fails here, so its place is decided, not implied. */
function unplacedFolders(graph: ImportGraph): string[] {
  const folders = new Set(
    graph.files
      .filter((file) => file.startsWith("functions/"))
      .map((file) => file.split("/").slice(0, 2).join("/")),
  );
  return [...folders].filter((folder) => tierOf(`${folder}/x.ts`) === undefined);
}

function upwardEdges(graph: ImportGraph): ImportEdge[] {
  const offenders: ImportEdge[] = [];
  for (const [file, edges] of graph.edges) {
    const from = tierOf(file);
    if (from === undefined) continue;
    for (const edge of edges) {
      const to = tierOf(edge.to);
      if (to !== undefined && to > from) offenders.push(edge);
    }
  }
  return offenders;
}

/**
 * Arrows that are known to run up today (`file → specifier`), each removed by the step of issue 19
 * named beside it.
 * The test fails when one of them is gone (so the list only shrinks) or when a new one appears.
 */
const KNOWN_UPWARD: Array<[edge: string, until: string]> = [];

/** Import cycles known today, by one file in each; the same rule as KNOWN_UPWARD. */
const KNOWN_CYCLES: Array<[member: string, until: string]> = [];

/** Packages a channel's inbound half must not load: the platform SDKs, Workers-only modules. */
const SEND_SIDE = /^(@slack\/web-api|@line\/bot-sdk|twilio|@larksuiteoapi\/|cloudflare:)/;
const SEND_CODE = /^functions\/channels\/[^/]+\/(send|progress|api|client|rest)\.ts$/;

/**
 * What reads the config: the loader (any schema), the base schema (every key outside
 * `channels.<id>`), and the gateway's composed schema (the base extended by each channel's config
 * module), which may load the channels' config modules but none of their runtime.
 */
const CONFIG_LOADER = "functions/config/load.ts";
const BASE_CONFIG = "functions/config/schema.ts";
const GATEWAY_CONFIG = "functions/channels/gateway-config.ts";
/** 20 → 21 with the auth block (auth-schema.ts: `auth.profiles`, `auth.order`, their cross-checks). */
const CONFIG_LOADER_MAX_FILES = 21;
/** The packages no config reader may load: the platform SDKs, JWT code, Workers-only modules. */
const NOT_FOR_CONFIG = /^(@slack\/web-api|@line\/bot-sdk|twilio|@larksuiteoapi\/|jose|cloudflare:)/;

const graph = importGraph();

describe("layering", () => {
  it("reads an import in every form it can take, types included", () => {
    const source = [
      'import type { Env } from "../../workers/env.ts";',
      'import { ingestEnvelope } from "../workers/ingest.ts";',
      'import { type Only } from "../workers/kept.ts";',
      'export { x } from "../workers/x.ts";',
      'export type { T } from "../workers/t.ts";',
      'const m = await import("../workers/y.ts");',
      'let t: import("../workers/w.ts").W;',
      "import {\n  a,\n  b,\n} from '../workers/z.ts';",
    ].join("\n");
    const edges = importsInSource("functions/a/b.ts", source);
    assert.deepEqual(
      edges.map((edge) => [edge.specifier, edge.typeOnly, edge.line]),
      [
        ["../../workers/env.ts", true, 1],
        ["../workers/ingest.ts", false, 2],
        // verbatimModuleSyntax keeps `import { type X }` as a side-effect import: it runs.
        ["../workers/kept.ts", false, 3],
        ["../workers/x.ts", false, 4],
        ["../workers/t.ts", true, 5],
        ["../workers/y.ts", false, 6],
        ["../workers/w.ts", true, 7],
        ["../workers/z.ts", false, 11],
      ],
    );
    assert.equal(edges[0]!.to, "workers/env.ts");
  });

  it("places every folder under functions/ in a tier", () => {
    assert.deepEqual(unplacedFolders(graph), []);
  });

  it("imports only along or down the tiers (workers → durable-objects → functions), types included", () => {
    const upward = upwardEdges(graph);
    const found = upward.map((edge) => `${edge.from} → ${edge.specifier}`);
    const known = KNOWN_UPWARD.map(([edge]) => edge);
    assert.deepEqual(
      upward.filter((_, index) => !known.includes(found[index]!)).map(describeEdge),
      [],
      "these imports run up the layers",
    );
    assert.deepEqual(
      known.filter((edge) => !found.includes(edge)),
      [],
      "these known exceptions are gone: delete them from KNOWN_UPWARD",
    );
  });

  it("nothing under web/ imports from workers/, durable-objects/ or functions/", () => {
    const offenders = graph.files
      .filter((file) => file.startsWith("web/"))
      .flatMap((file) => graph.edges.get(file)!)
      .filter((edge) => /^(workers|durable-objects|functions)\//.test(edge.to))
      .map(describeEdge);
    assert.deepEqual(offenders, []);
  });

  it("has no import cycles, type imports included", () => {
    const cycles = importCycles(graph).map((group) => {
      const inside = new Set(group);
      const edges = group.flatMap((file) =>
        graph.edges.get(file)!.filter((edge) => inside.has(edge.to)),
      );
      const shown = edges.slice(0, 12).map(describeEdge).join(", ");
      const known = KNOWN_CYCLES.find(([member]) => inside.has(member));
      return { known, text: `${group.length} files: ${shown}${edges.length > 12 ? ", …" : ""}` };
    });
    assert.deepEqual(
      cycles.filter((cycle) => !cycle.known).map((cycle) => cycle.text),
      [],
      "these files import each other",
    );
    assert.deepEqual(
      KNOWN_CYCLES.filter(([member]) => !cycles.some((cycle) => cycle.known?.[0] === member)),
      [],
      "these known cycles are gone: delete them from KNOWN_CYCLES",
    );
  });
});

describe("boundaries", () => {
  const inbound = graph.files.filter((file) =>
    /^functions\/channels\/[^/]+\/(manifest|verify|parse|config)\.ts$/.test(file),
  );

  it("finds the inbound halves of the channels", () => {
    assert.ok(inbound.length >= 18, `only ${inbound.length} verify/parse files found`);
  });

  for (const file of inbound) {
    it(`${file} loads no send code and no platform SDK`, () => {
      const offenders = [...runtimeClosure(graph, file)]
        .filter((target) => SEND_CODE.test(target) || SEND_SIDE.test(target))
        .map((target) => runtimePath(graph, file, target).join(" → ") || target);
      assert.deepEqual(offenders, []);
    });
  }

  for (const reader of [CONFIG_LOADER, BASE_CONFIG])
    it(`${reader} loads fewer than ${CONFIG_LOADER_MAX_FILES} files and no channel`, () => {
      const closure = [...runtimeClosure(graph, reader, { lazy: false })].filter((file) =>
        graph.edges.has(file),
      );
      const channels = closure
        .filter((file) => file.startsWith("functions/channels/"))
        .map((file) => runtimePath(graph, reader, file, { lazy: false }).join(" → "));
      assert.deepEqual(channels.slice(0, 5), [], "the config reaches channel code");
      assert.ok(
        closure.length < CONFIG_LOADER_MAX_FILES,
        `${reader} loads ${closure.length} files:\n  ${closure.join("\n  ")}`,
      );
    });

  it("the gateway's composed config loads the channels' config modules, none of their runtime", () => {
    // What loads with it: each channel's manifest reaches its runtime only by a dynamic import,
    // which runs when the registry asks for the definition.
    const closure = [...runtimeClosure(graph, GATEWAY_CONFIG, { lazy: false })];
    const offenders = closure
      .filter(
        (target) =>
          NOT_FOR_CONFIG.test(target) ||
          (/^functions\/channels\/[^/]+\//.test(target) &&
            !/^functions\/channels\/[^/]+\/(config|manifest)\.ts$/.test(target)),
      )
      .map(
        (target) =>
          runtimePath(graph, GATEWAY_CONFIG, target, { lazy: false }).join(" → ") || target,
      );
    assert.deepEqual(offenders, []);
    assert.ok(
      closure.some((file) => file === "functions/channels/slack/config.ts"),
      "the composed config should validate channels.slack",
    );
  });

  it("no Worker module loads companion/, test/ or scripts/ code", () => {
    const offenders = [...runtimeClosure(graph, "workers/index.ts")]
      .filter((file) => /^(companion|test|scripts)\//.test(file))
      .map((file) => runtimePath(graph, "workers/index.ts", file).join(" → "));
    assert.deepEqual(offenders, []);
  });
});
