import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { Redactor } from "../../logging/redact.ts";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";

const argsSchema = z.object({
  action: z.string().trim().min(1).default("config.get"),
  path: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_*-]+(\.[A-Za-z0-9_*-]+)*$/, "a dotted key path, e.g. agents.defaults")
    .optional(),
});

/** Key names whose string values are credentials (a SecretRef object under them is shown as the ref). */
const SECRET_KEY =
  /(token|secret|password|passwd|api[-_]?key|apikey|credential|private[-_]?key|signing|cookie|auth)$/i;

/**
 * `gateway` (OpenClaw's owner-only gateway tool), read-only here: `config.get` shows the config in
 * force (defaults filled in), the whole of it or one dotted `path`. Secrets never appear: a
 * SecretRef (`{ source, id }`) is shown as the ref it is, never resolved; a credential written
 * inline in the config is replaced by "[redacted]", and any string shaped like a token is masked.
 * Restarts and config writes are refused: the config file is changed by a deploy, not by the agent.
 */
export function createGatewayTool(config: EdgeclawConfig): AgentTool {
  return {
    name: "gateway",
    description:
      "Owner only, read-only: show the gateway configuration in force (action config.get, optional dotted path such as agents.defaults or tools). Secrets are shown as references, never values.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["config.get"] },
        path: { type: "string", description: "Dotted key path, e.g. agents.defaults.subagents" },
      },
      additionalProperties: false,
    },
    ownerOnly: true,
    async execute(args) {
      const parsed = parseToolArgs("gateway", argsSchema, args);
      if (parsed.action !== "config.get")
        return {
          content: `gateway ${parsed.action}: not available — this tool is read-only (config.get). The config changes with a deploy.`,
          isError: true,
        };
      let value: unknown = config;
      for (const part of parsed.path?.split(".") ?? []) {
        if (!value || typeof value !== "object" || !(part in value))
          return { content: `gateway config.get: no key ${parsed.path}`, isError: true };
        value = (value as Record<string, unknown>)[part];
      }
      const redactor = new Redactor({ secrets: [], extraPatterns: [], redactSensitive: "off" });
      return {
        content: JSON.stringify(
          { path: parsed.path ?? "", value: redactValue(value, redactor, parsed.path ?? "") },
          null,
          2,
        ),
      };
    },
  };
}

function isSecretRef(value: unknown): boolean {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.includes("source") &&
    keys.includes("id") &&
    keys.every((key) => key === "source" || key === "id" || key === "provider")
  );
}

export function redactValue(value: unknown, redactor: Redactor, key: string): unknown {
  if (typeof value === "string") {
    const name = key.split(".").at(-1) ?? "";
    return SECRET_KEY.test(name) && value.length > 0 ? "[redacted]" : redactor.string(value);
  }
  if (Array.isArray(value))
    return value.map((item, index) => redactValue(item, redactor, `${key}.${index}`));
  if (!value || typeof value !== "object") return value;
  if (isSecretRef(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([name, inner]) => [
      name,
      redactValue(inner, redactor, key ? `${key}.${name}` : name),
    ]),
  );
}
