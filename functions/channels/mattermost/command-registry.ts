/**
 * Where the Worker keeps the slash commands it registered on Mattermost and the token Mattermost
 * issued for each: the CommandRegistryDO (durable-objects/command-registry.ts), one object per
 * channel account. Callbacks are verified against it on the webhook path, which touches Durable
 * Objects only (never Postgres, never Mattermost). Channel code reaches it through the binding in
 * `env` by this narrow shape, so nothing here imports a Durable Object class.
 */

export interface MattermostCommandRecord {
  teamId: string;
  /** Without the slash: `oc_status`. */
  trigger: string;
  commandId: string;
  /** The token Mattermost sends in every callback of this command (form field `token`). A secret. */
  token: string;
  callbackUrl: string;
  /** The bot account that created the command (replies, typing and thread checks act as it). */
  botUserId: string;
  registeredAt: number;
}

export interface CommandRegistry {
  /** The account's whole set, replacing whatever was registered before (commands dropped since stop verifying). */
  replace(records: MattermostCommandRecord[]): Promise<void>;
  find(teamId: string, trigger: string): Promise<MattermostCommandRecord | null>;
  /** Without tokens. */
  list(): Promise<Array<Omit<MattermostCommandRecord, "token">>>;
}

interface RegistryNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): CommandRegistry;
}

/** The registry of one Mattermost account, or undefined when the Worker has no COMMAND_REGISTRY binding. */
export function mattermostCommandRegistry(
  env: Record<string, unknown>,
  accountId: string,
): CommandRegistry | undefined {
  const namespace = env.COMMAND_REGISTRY as RegistryNamespace | undefined;
  if (!namespace || typeof namespace.idFromName !== "function") return undefined;
  return namespace.get(namespace.idFromName(`mattermost:${accountId}`));
}
