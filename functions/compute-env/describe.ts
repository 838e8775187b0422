import type { InstallRow } from "./installs.ts";
import type { ManifestEnv } from "./manifest.ts";

/** One install record in words: what the model reads back, and what the CLI and chat print. */
export function describeInstall(row: InstallRow): string {
  const what = row.packages.join(" ");
  const tried = row.tried.map((t) => `${t.env}: ${t.ok ? "solves" : "conflict"}`).join("; ");
  const triedLine = tried ? ` (tried ${tried})` : "";
  switch (row.status) {
    case "installed": {
      const changes = row.changes;
      const linked = changes?.link.map((p) => `${p.name} ${p.version}`).join(", ");
      return `Installed ${what} into ${row.envName}${triedLine}.${linked ? ` Linked: ${linked}.` : " Already installed: nothing changed."}${changes?.unlink.length ? ` Replaced: ${changes.unlink.map((p) => `${p.name} ${p.version}`).join(", ")}.` : ""}`;
    }
    case "created":
      return `Created env ${row.envName} with ${what} and registered it (${row.description ?? ""}; reason: ${row.reason ?? ""}). Commands that need its packages now run there; name it with \`conda run -n ${row.envName} …\`.`;
    case "needs-new-env": {
      const p = row.proposal!;
      return [
        `status: needs-new-env (question ${row.id})`,
        `${what} conflicts with every registered env${triedLine}. Nothing was installed and no env was changed.`,
        `Solver: ${row.tried[0]?.message.split("\n").slice(0, 8).join(" ") ?? ""}`,
        `Ask the user whether to create a new env for it, e.g. "${what} conflicts with the current environments. Create a new environment ${p.name} for it?"`,
        `If they agree, call env_create with name "${p.name}", packages ${JSON.stringify(p.packages)}, a short description of what it is for, reason "${p.reason}" and questionId "${row.id}". The question is also on the control page (Environments).`,
      ].join("\n");
    }
    case "rolled-back":
      return `Installing ${what} did not complete: ${row.error}.`;
    case "running":
    case "planned":
      return `Installing ${what} is in progress (${row.id}).`;
    case "answered":
      return `The question about ${what} was answered: ${row.reason ?? ""}.`;
    case "declined":
      return `The user declined a new env for ${what}.`;
    default:
      return `${row.kind === "create" ? `Creating ${row.envName}` : `Installing ${what}`} ${row.status}: ${row.error ?? "no reason recorded"}${triedLine}.`;
  }
}

/** The envs, one paragraph each: `env status`, `/env` and env_status. */
export function describeEnvs(envs: readonly ManifestEnv[], withPackages: boolean): string {
  if (!envs.length) return "No env registered yet.";
  return envs
    .map((e) => {
      const versions = [
        e.pythonVersion && `Python ${e.pythonVersion}`,
        e.rVersion && `R ${e.rVersion}`,
      ]
        .filter(Boolean)
        .join(", ");
      const head = `${e.name} (${e.type}${versions ? `, ${versions}` : ""}): ${e.description || "no description"}${e.createdReason ? ` — created because ${e.createdReason}` : ""}`;
      const names = Object.entries(e.packages).map(([n, v]) => `${n} ${v}`);
      return withPackages ? `${head}\n  ${names.join(", ")}` : `${head} — ${names.length} packages`;
    })
    .join("\n");
}
