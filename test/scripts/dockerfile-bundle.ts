import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { projectRoot } from "./helpers.ts";

/**
 * What can be checked of an image without a Docker engine: every COPY source exists, the source
 * files its esbuild bundle is made of are all copied, and every npm package the bundle takes is a
 * dependency of the companion workspace (the only one its build stage installs). An image whose
 * bundle imports a file nobody copied fails only at `docker build`, which nothing here runs.
 */
export async function assertDockerfileCoversBundle(
  dockerfile: string,
  entry: string,
  external: string[] = [],
): Promise<void> {
  const text = readFileSync(join(projectRoot, dockerfile), "utf8");
  const sources = [...text.matchAll(/^COPY (?!--from)(.+)$/gm)].flatMap((match) =>
    match[1]!.trim().split(/\s+/).slice(0, -1),
  );
  for (const source of sources)
    assert.ok(existsSync(join(projectRoot, source)), `${source} (COPY in ${dockerfile}) exists`);
  const result = await build({
    entryPoints: [join(projectRoot, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    external,
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const inputs = Object.keys(result.metafile.inputs);
  const files = inputs.filter((input) => !input.includes("node_modules/"));
  assert.ok(files.length >= 3, files.join(", "));
  for (const file of files)
    assert.ok(
      sources.some((source) => file === source || file.startsWith(`${source.replace(/\/$/, "")}/`)),
      `${file} is in the ${entry} bundle but ${dockerfile} does not copy it`,
    );
  const dependencies = Object.keys(
    (
      JSON.parse(readFileSync(join(projectRoot, "companion", "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      }
    ).dependencies,
  );
  for (const input of inputs.filter((input) => input.includes("node_modules/"))) {
    const path = input.split("node_modules/").at(-1)!;
    const name = path.startsWith("@") ? path.split("/").slice(0, 2).join("/") : path.split("/")[0]!;
    assert.ok(
      dependencies.includes(name),
      `${entry} bundles ${name}, which companion/package.json does not depend on (${dockerfile} installs only those)`,
    );
  }
}
