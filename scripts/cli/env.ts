import type { CommandSpec } from "./command-spec.ts";
import { adminRequest } from "./http.ts";

/**
 * `edgeclaw env …`: AcaClaw's `acaclaw-env` verbs over /admin/env (workers/admin-env.ts) — status,
 * packages, disciplines, add-discipline, install (the cascade), create-env, list-envs. --json prints
 * the admin API's answer; `env status --json` carries the env-manifest.json as `manifest`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the admin API answer, printed field by field (its shape is workers/admin-env.ts).
type Json = Record<string, any>;

function agentQuery(options: CommandSpec["options"] | Record<string, unknown>): string {
  return typeof options.agent === "string" ? `agent=${encodeURIComponent(options.agent)}` : "";
}

function envLine(e: Json): string {
  const versions = [e.pythonVersion && `Python ${e.pythonVersion}`, e.rVersion && `R ${e.rVersion}`]
    .filter(Boolean)
    .join(", ");
  return `${e.name} (${e.type}${versions ? `, ${versions}` : ""}): ${e.description || "no description"} — ${Object.keys(e.packages ?? {}).length} packages${e.createdReason ? `\n  created because: ${e.createdReason}` : ""}`;
}

export const ENV_COMMANDS: CommandSpec[] = [
  {
    name: "env status",
    args: [],
    options: { agent: "id" },
    summary: "an agent's conda envs, the conda found, R status, open questions and recent installs",
    async run({ options, connection, print }) {
      const json = (await adminRequest(connection(), "GET", `/env?${agentQuery(options)}`)) as Json;
      print(json, () => {
        const r = json.r as Json;
        const lines = [
          `Conda: ${json.conda?.exe ?? "not found"}${json.conda?.source ? ` (${json.conda.source})` : ""}`,
          ...(json.envs as Json[]).map(envLine),
          ...(json.unregistered?.length ? [`Not registered: ${json.unregistered.join(", ")}`] : []),
          `R: ${r.kind === "conda" ? `R ${r.version} in ${r.env}` : r.kind === "system" ? `${r.banner} (${r.path}${r.version ? `, ${r.version}` : ""})` : `${r.banner} — install: ${r.install}`}`,
          ...(json.questions as Json[]).map(
            (q) =>
              `Question ${q.id}: ${q.packages.join(" ")} conflicts with every env — create ${q.proposal?.name}? (npx edgeclaw env create-env ${q.proposal?.name} --description "…")`,
          ),
          ...(json.installs as Json[])
            .slice(0, 10)
            .map(
              (i) =>
                `${i.startedAt} ${i.kind} ${i.packages.join(" ")} → ${i.envName ?? "-"}: ${i.status}${i.error ? ` (${i.error})` : ""}`,
            ),
        ];
        return lines.join("\n");
      });
      return 0;
    },
  },
  {
    name: "env list-envs",
    args: [],
    options: { agent: "id" },
    summary: "the registered envs (env-manifest.json)",
    async run({ options, connection, print }) {
      const json = (await adminRequest(connection(), "GET", `/env?${agentQuery(options)}`)) as Json;
      print(
        json.manifest,
        () => (json.envs as Json[]).map(envLine).join("\n") || "No env registered.",
      );
      return 0;
    },
  },
  {
    name: "env packages",
    args: [],
    options: { agent: "id", env: "name" },
    summary: "the packages of the primary env, or of --env <name>",
    async run({ options, connection, print }) {
      const env = typeof options.env === "string" ? `&env=${encodeURIComponent(options.env)}` : "";
      const json = (await adminRequest(
        connection(),
        "GET",
        `/env/packages?${agentQuery(options)}${env}`,
      )) as Json;
      print(json, () =>
        Object.entries(json.packages as Record<string, string>)
          .map(([n, v]) => `${n} ${v}`)
          .join("\n"),
      );
      return 0;
    },
  },
  {
    name: "env disciplines",
    args: [],
    options: { agent: "id" },
    summary: "the disciplines (essential packages) and which are in the primary env",
    async run({ options, connection, print }) {
      const json = (await adminRequest(
        connection(),
        "GET",
        `/env/disciplines?${agentQuery(options)}`,
      )) as Json;
      print(json, () =>
        (json.disciplines as Json[])
          .map(
            (d) =>
              `${d.added ? "*" : " "} ${d.id} (${d.bundle}): ${d.packages.join(" ")}${d.rPackages.length ? `; with R: ${d.rPackages.join(" ")}` : ""}`,
          )
          .join("\n"),
      );
      return 0;
    },
  },
  {
    name: "env add-discipline",
    args: ["discipline"],
    options: { agent: "id", "with-r": "flag" },
    summary:
      "merge a discipline's packages into the primary env (with R: r-base r-irkernel r-essentials too)",
    async run({ args: [discipline], options, connection, print }) {
      const json = (await adminRequest(connection(), "POST", "/env/disciplines", {
        agent: options.agent,
        discipline,
        withR: options["with-r"] === true,
      })) as Json;
      print(json, () => json.text);
      return json.install?.status === "installed" ? 0 : 1;
    },
  },
  {
    name: "env install",
    args: ["package"],
    options: { agent: "id", env: "name", with: "list" },
    summary:
      "install a package (--with more,packages) with the cascade (primary env, then auxiliaries; a conflict everywhere asks for a new env)",
    async run({ args: [pkg], options, connection, print }) {
      const more = typeof options.with === "string" ? options.with.split(",").filter(Boolean) : [];
      const json = (await adminRequest(connection(), "POST", "/env/install", {
        agent: options.agent,
        packages: [pkg!, ...more],
        ...(typeof options.env === "string" ? { env: options.env } : {}),
      })) as Json;
      print(json, () => json.text);
      return json.install?.status === "installed" ? 0 : 1;
    },
  },
  {
    name: "env create-env",
    args: ["name"],
    options: { agent: "id", description: "text", packages: "list", reason: "text", question: "id" },
    summary:
      "create and register an auxiliary env (--packages a,b; --question answers a pending one)",
    async run({ args: [name], options, connection, print }) {
      const packages =
        typeof options.packages === "string"
          ? options.packages.split(",").filter(Boolean)
          : undefined;
      const json = (await adminRequest(connection(), "POST", "/env/create", {
        agent: options.agent,
        name,
        description: options.description,
        ...(packages ? { packages } : {}),
        ...(typeof options.reason === "string" ? { reason: options.reason } : {}),
        ...(typeof options.question === "string" ? { questionId: options.question } : {}),
      })) as Json;
      print(json, () => json.text);
      return json.install?.status === "created" ? 0 : 1;
    },
  },
];
