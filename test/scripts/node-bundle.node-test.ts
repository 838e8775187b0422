import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { bundledEntry } from "../../scripts/lib/node-bundle.mjs";
import { edgeclawBin, projectRoot, tempProject } from "./helpers.ts";

/**
 * The CLI and `npm run dev` run from a bundle kept between runs (scripts/lib/node-bundle.mjs): it
 * must never run stale code — any edit, or a file added where a template-literal import looks —
 * and each file must still find the files beside it through its own `import.meta.url`.
 */
describe("the cached bundle of a TypeScript entry point", () => {
  const project = () =>
    tempProject({
      "main.ts": [
        'import { greeting } from "./lib/greeting.ts";',
        'import { whereAmI } from "./lib/where.ts";',
        "const [name] = process.argv.slice(2);",
        "const pieces: string[] = [];",
        'for (const id of ["a", "b"]) {',
        "  try {",
        "    pieces.push(((await import(`./pieces/${id}.ts`)) as { piece: string }).piece);",
        "  } catch {",
        '    pieces.push("-");',
        "  }",
        "}",
        'console.log(JSON.stringify({ text: greeting(name ?? "world"), where: whereAmI(), pieces }));',
      ].join("\n"),
      "lib/greeting.ts": "export const greeting = (name: string): string => `hello ${name}`;\n",
      "lib/where.ts": "export const whereAmI = (): string => import.meta.url;\n",
      "pieces/a.ts": 'export const piece = "a";\n',
    });

  async function run(root: string): Promise<{ built: boolean; out: unknown }> {
    const bundle = await bundledEntry("main.ts", root);
    const child = spawnSync(process.execPath, [bundle.path, "you"], { encoding: "utf8" });
    assert.equal(child.status, 0, child.stderr);
    return { built: bundle.built, out: JSON.parse(child.stdout) };
  }

  it("builds once, then reuses the bundle while nothing changed", async () => {
    const root = project();
    try {
      const first = await run(root);
      assert.equal(first.built, true);
      assert.deepEqual(first.out, {
        text: "hello you",
        // The bundled file still sees its own URL, not the bundle's.
        where: pathToFileURL(join(root, "lib", "where.ts")).href,
        pieces: ["a", "-"],
      });
      assert.equal((await run(root)).built, false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("rebuilds after an edit to any input, and after a file is added beside the inputs", async () => {
    const root = project();
    try {
      await run(root);
      writeFileSync(
        join(root, "lib", "greeting.ts"),
        "export const greeting = (name: string): string => `hi ${name}`;\n",
      );
      const edited = await run(root);
      assert.equal(edited.built, true);
      assert.equal((edited.out as { text: string }).text, "hi you");
      // A new match for `./pieces/${id}.ts`: no input changed, its folder's listing did.
      writeFileSync(join(root, "pieces", "b.ts"), 'export const piece = "b";\n');
      const added = await run(root);
      assert.equal(added.built, true);
      assert.deepEqual((added.out as { pieces: string[] }).pieces, ["a", "b"]);
      assert.equal((await run(root)).built, false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("`npx edgeclaw` runs from the bundle, and through tsx with EDGECLAW_NODE_BUNDLE=0", () => {
    for (const env of [{}, { EDGECLAW_NODE_BUNDLE: "0" }]) {
      const child = spawnSync(process.execPath, [edgeclawBin, "--help"], {
        cwd: projectRoot,
        encoding: "utf8",
        env: { ...process.env, ...env },
      });
      assert.equal(child.status, 0, child.stderr);
      // Every channel's own commands are in it (a template-literal import per channel).
      assert.match(child.stdout, /channels telegram set-webhook/);
      assert.match(child.stdout, /channels mattermost register-commands/);
    }
    // And every channel's simulator.
    const help = spawnSync(process.execPath, [edgeclawBin, "simulate", "--help"], {
      cwd: projectRoot,
      encoding: "utf8",
    });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /slack, telegram, sms, line, googlechat, feishu, msteams, discord/);
  });
});
