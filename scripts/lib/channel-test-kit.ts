// Types only: the workerd test program reads them too (test/setup/test-config.ts), without Node.
/**
 * What a channel brings to the workerd test suite (`functions/channels/<id>/test-kit.ts`, export
 * `testKit`): its fake platform, started once by the global setup (test/setup/global.ts), and what
 * the test Worker needs to talk to it — the channel's block of the test config and the env bindings
 * that block's secret refs and the channel's tests read. The global setup, the test config and
 * vitest.config.ts loop over the kits, so adding a channel touches none of them.
 */
export interface ChannelTestKit {
  /**
   * Starts the channel's fake platform on loopback. `values` are handed, as they are, to `config`
   * and `bindings` in the vitest process (so strings only: the fake's URL, a generated key).
   */
  start(): Promise<{ values: FakeValues; stop(): Promise<void> }>;
  /** `channels.<id>` of the test config, pointed at the started fake. */
  config(values: FakeValues): Record<string, unknown>;
  /** The test Worker's env bindings this channel's block and tests read (URLs, secrets). */
  bindings(values: FakeValues): Record<string, string>;
  /**
   * The companion ingress keys (`companion.ingressKeys`) that carry this channel: a key another
   * kit or the test config already declared gets this channel added to its `channels`; a new one
   * needs `secretEnv`, the binding its secret is read from.
   */
  companionKeys?: CompanionTestKey[];
}

/** What a started fake hands on: its base URL, and any other string its block or env needs. */
export interface FakeValues {
  url: string;
  [name: string]: string;
}

export interface CompanionTestKey {
  id: string;
  secretEnv?: string;
  accounts?: string[];
  deployment?: string;
}
