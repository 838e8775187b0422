import base from "../../vitest.config.ts";

/** The browser benchmark runs in workerd like the tests: the browser Worker, the Browser Run stand-in, Debian's Chromium. */
export default {
  ...base,
  test: {
    ...base.test,
    include: ["scripts/bench/browser.bench.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 600_000,
  },
};
