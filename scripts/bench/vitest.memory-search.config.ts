import base from "../../vitest.config.ts";

/** The memory-search benchmark runs in workerd like the tests (same Worker, PGlite + pgvector, fake embeddings). */
export default {
  ...base,
  test: {
    ...base.test,
    include: ["scripts/bench/memory-search.bench.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 600_000,
  },
};
