// `node scripts/run.mjs <entry.ts> [args…]`: runs a TypeScript entry point from its cached bundle
// (scripts/lib/node-bundle.mjs), as `npm run dev` does. The entry sees the arguments after it.
import { resolve } from "node:path";
import { runEntry } from "./lib/node-bundle.mjs";

const [entry] = process.argv.splice(2, 1);
if (!entry) {
  console.error("usage: node scripts/run.mjs <entry.ts> [args…]");
  process.exit(2);
}
process.argv[1] = resolve(entry);
await runEntry(entry);
