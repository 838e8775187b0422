#!/usr/bin/env node
// Shim for `npx edgeclaw`: registers tsx's loader, then runs the TypeScript CLI as is.
import { register } from "tsx/esm/api";

register();
await import("../scripts/cli.ts");
