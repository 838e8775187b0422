import type { StartOp } from "../../functions/sandbox/wire.ts";

/**
 * What a sandbox container may reach, decided when it starts (a container's egress cannot change
 * while it runs): nothing (the default: agents.defaults.sandbox.docker.network "none", and every
 * non-main session's own sandbox), only the operator's `docker.allowedHosts`, or everything.
 */
export type Egress = { kind: "none" } | { kind: "hosts"; hosts: string[] } | { kind: "all" };

export function egressOf(op: Pick<StartOp, "network" | "allowedHosts">): Egress {
  if (!op.network) return { kind: "none" };
  if (op.allowedHosts.length) return { kind: "hosts", hosts: [...op.allowedHosts].sort() };
  return { kind: "all" };
}

export function sameEgress(a: Egress, b: Egress): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind !== "hosts" || b.kind !== "hosts") return true;
  return a.hosts.length === b.hosts.length && a.hosts.every((host, i) => host === b.hosts[i]);
}

/**
 * The Container class's settings for an egress: `enableInternet`, and the allowlist its outbound
 * proxy enforces. Once a container class has had an allowlist, the library keeps intercepting
 * (and persists the list), so "none" and "all" then need one too: [] denies every host, ["*"]
 * allows every host.
 */
export function containerEgress(
  egress: Egress,
  intercepting: boolean,
): { enableInternet: boolean; allowedHosts: string[] | undefined } {
  switch (egress.kind) {
    case "none":
      return { enableInternet: false, allowedHosts: intercepting ? [] : undefined };
    case "all":
      return { enableInternet: true, allowedHosts: intercepting ? ["*"] : undefined };
    case "hosts":
      return { enableInternet: false, allowedHosts: egress.hosts };
  }
}
