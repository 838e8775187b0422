import type { TestProject } from "vitest/node";
import { startLocalPostgres } from "../../scripts/lib/local-postgres.ts";

/** Starts the loopback services every workerd test talks to, and hands their addresses to the pool. */
export default async function setup(project: TestProject) {
  const pg = await startLocalPostgres();
  project.provide("databaseUrl", pg.databaseUrl);
  project.provide("pgWsProxy", pg.wsProxy);
  return async () => {
    await pg.stop();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    pgWsProxy: string;
  }
}
