#!/usr/bin/env node
// Shim for `npx edgeclaw`: runs the TypeScript CLI from its cached bundle (scripts/lib/node-bundle.mjs).
import { runEntry } from "../scripts/lib/node-bundle.mjs";

await runEntry("scripts/cli.ts");
