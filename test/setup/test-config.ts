/**
 * The edgeclaw.json5 the workerd test suite runs with, pointed at the loopback fakes. It goes to the
 * Worker as the EDGECLAW_CONFIG binding, exactly as `npm run dev` passes a user's config.
 */
export interface FakeAddresses {
  [name: string]: string;
}

export function buildTestConfig(_fakes: FakeAddresses): Record<string, unknown> {
  return {
    gateway: { auth: { token: "test-gateway-token" } },
  };
}
