import * as z from "zod";

/**
 * `agents.defaults.computeEnv` (override per agent in `agents.list[].computeEnv`): AcaClaw's
 * computing environment — managed conda environments (Miniforge / conda-forge) inside the sandbox,
 * with AcaClaw's names and defaults. Off unless `enabled`: then every `exec` runs through
 * `conda run` in the agent's primary env, installs go through the cascade (primary → auxiliaries →
 * ask the user → new env) and the system prompt lists the envs. docs/concepts/computing-environment.md.
 */
export const computeEnvSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** The primary env every command runs in by default (AcaClaw's `acaclaw`; the manifest's defaultEnv). */
    primary: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a conda env name")
      .default("acaclaw"),
    /**
     * The conda installation inside the sandbox: its `bin/` goes on PATH after tools.exec.pathPrepend.
     * The image's is /opt/conda (sandbox/Dockerfile); a host Miniforge bound into bubblewrap keeps its own path.
     */
    condaPrefix: z.string().min(1).default("/opt/conda"),
    /** The executable the commands call: conda, mamba or micromamba (found on that PATH). */
    condaExe: z.string().min(1).default("conda"),
    /**
     * The only channels installs and new envs take packages from (`--override-channels -c …`). A
     * named channel (conda-forge) lives on conda.anaconda.org: the sandbox needs network to reach it,
     * and with docker.allowedHosts set, that host must be in the list.
     */
    channels: z.array(z.string().min(1)).min(1).default(["conda-forge"]),
    /** Disciplines whose essential packages the primary env carries (biology, chemistry, medicine, general). */
    disciplines: z.array(z.string().min(1)).default([]),
    /** With a discipline: also R (r-base r-irkernel r-essentials) and the discipline's R packages. */
    withR: z.boolean().default(false),
    /** Wall time one install, create or dry-run may take before it is killed and rolled back. */
    installTimeoutSeconds: z.number().int().positive().default(900),
    /** The most one install may download (the dry-run's FETCH sizes); more is refused before it starts. */
    maxDownloadBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 ** 3),
    /**
     * Route a command to an auxiliary env when it needs a package only that env has (imports in the
     * command or in the Python script it runs). false: always the primary env unless named.
     */
    autoRoute: z.boolean().default(true),
  })
  .loose()
  .prefault({});
export type ComputeEnvConfig = z.infer<typeof computeEnvSchema>;
