/** The fake is on loopback, which an account may reach only with the private-network guard off. */
export const LOOPBACK_ALLOWED = { dangerouslyAllowPrivateNetwork: true };

/**
 * A self-hosted channel's config block (and each of its accounts) pointed at the fake: `urlKey`,
 * the server URL the channel's config names (Matrix's `homeserver`, Mattermost's `baseUrl`), set
 * to the fake's URL and the private-network guard off; the rest stays as the user wrote it.
 */
export function pointedAtFake(
  own: Record<string, unknown>,
  urlKey: string,
  fakeUrl: string,
): Record<string, unknown> {
  const accounts = Object.fromEntries(
    Object.entries((own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {}).map(
      ([id, account]) => [id, { ...account, [urlKey]: fakeUrl, network: LOOPBACK_ALLOWED }],
    ),
  );
  return {
    ...own,
    [urlKey]: fakeUrl,
    network: LOOPBACK_ALLOWED,
    ...(Object.keys(accounts).length ? { accounts } : {}),
  };
}
