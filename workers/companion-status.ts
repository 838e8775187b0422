import type { Env } from "./env.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { allSocketAccounts } from "../functions/channels/companion/socket-accounts.ts";
import { authorizeSocketAccount } from "../functions/channels/companion/authorize.ts";
import type { CompanionStatus } from "../durable-objects/rpc.ts";
import type { ContainerKeeperReport } from "../durable-objects/companion-keeper.ts";
import { companionStub } from "./companion-signed.ts";
import { companionContainerDeployed } from "./companion-container-keeper.ts";

type ContainerPart = { container?: ContainerKeeperReport };
type DeploymentHealth =
  | (CompanionStatus & { deployment: string } & ContainerPart)
  | ({ deployment: string; instance: null; note: string } & ContainerPart)
  | { deployment: string; error: string };

/**
 * What `GET /admin/companion/status` (gateway token) says about the companion, only when some
 * account is served over it: the last status report of each deployment that runs such an account
 * (instance, lease epoch, whether the lease is still held, per-connector state and last error, the
 * container's missing secrets). One deployment → `companion`; several → `companion.deployments`.
 * Never on the unauthenticated `/health`: connector errors quote platform answers, and account ids
 * and env var names tell a stranger what to aim at.
 */
export async function companionStatusReport(
  env: Env,
): Promise<{ companion?: DeploymentHealth | { deployments: DeploymentHealth[] } }> {
  const config = configFromEnv(env);
  const accounts = allSocketAccounts(config, env);
  if (!accounts.length) return {};
  const deployments = new Set<string>();
  for (const key of config.companion.ingressKeys) {
    if (
      accounts.some(
        ({ definition, account }) =>
          authorizeSocketAccount(key, definition.id, account.accountId).ok,
      )
    )
      deployments.add(key.deployment ?? key.id);
  }
  const reports = await Promise.all(
    [...deployments].map(async (deployment): Promise<DeploymentHealth> => {
      try {
        const stub = companionStub(env, deployment);
        const status = await stub.status();
        // Run as a Cloudflare Container: whether it runs, its pending restart, the crash-loop breaker.
        const container = companionContainerDeployed(env)
          ? { container: await stub.containerReport() }
          : {};
        return status
          ? { deployment, ...status, ...container }
          : { deployment, instance: null, note: "no companion has reported yet", ...container };
      } catch (error) {
        return { deployment, error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  if (reports.length === 0)
    return {
      companion: {
        deployment: "",
        instance: null,
        note: "socket accounts are configured but no companion.ingressKeys entry speaks for them",
      },
    };
  return { companion: reports.length === 1 ? reports[0]! : { deployments: reports } };
}
