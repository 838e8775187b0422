/**
 * AN ESTIMATE, NOT A BILL: what sandbox time costs on Cloudflare Containers, from the published
 * rates (developers.cloudflare.com/containers/pricing, read 2026-12): memory $0.0000025 per
 * GiB-second and disk $0.00000007 per GB-second while the container runs, vCPU $0.000020 per
 * vCPU-second of active use; and the instance types' sizes (containers/platform/limits). CPU is
 * counted as if the command kept its whole vCPU busy, so the figure is an upper bound for the
 * command's own time; an idle container before it sleeps (container.sleepAfter) is billed too, and
 * the free allowances of the Workers Paid plan are ignored.
 */
export const CONTAINER_RATES = {
  memoryGibSecond: 0.0000025,
  diskGbSecond: 0.00000007,
  vcpuSecond: 0.00002,
};

export const INSTANCE_TYPES: Record<string, { vcpu: number; memoryGib: number; diskGb: number }> = {
  lite: { vcpu: 1 / 16, memoryGib: 0.25, diskGb: 2 },
  basic: { vcpu: 1 / 4, memoryGib: 1, diskGb: 4 },
  "standard-1": { vcpu: 1 / 2, memoryGib: 4, diskGb: 8 },
  "standard-2": { vcpu: 1, memoryGib: 6, diskGb: 12 },
  "standard-3": { vcpu: 2, memoryGib: 8, diskGb: 16 },
  "standard-4": { vcpu: 4, memoryGib: 12, diskGb: 20 },
};

/** USD for `seconds` of one running container of `instanceType` (undefined: a type not in the table). */
export function containerCostUsd(instanceType: string, seconds: number): number | undefined {
  const size = INSTANCE_TYPES[instanceType];
  if (!size) return undefined;
  return (
    seconds *
    (size.memoryGib * CONTAINER_RATES.memoryGibSecond +
      size.diskGb * CONTAINER_RATES.diskGbSecond +
      size.vcpu * CONTAINER_RATES.vcpuSecond)
  );
}
