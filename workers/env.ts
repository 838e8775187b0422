/** The Worker's bindings: defined below workers/ (durable-objects/env.ts) so lower layers never import upward. */
export type { Env } from "../durable-objects/env.ts";
