import { join, relative, sep } from "node:path";
import { baseConfigSchema } from "../../functions/config/schema.ts";
import { channelDefinitions } from "../../functions/channels/registry.ts";
import { keyDocs, schemaFiles } from "./jsdoc-index.ts";
import { keyRows, type KeyRow } from "./zod-walk.ts";
import { GENERATED_NOTE, tableCell } from "./markdown.ts";

/**
 * docs/reference/config.md: every key the base config schema (functions/config/schema.ts) validates,
 * each channel's block from that channel's own `configSchema`. Descriptions are the comments
 * written above the keys; a channel's keys take comments only from its own folder and the shared
 * files, so two channels' keys of one name never borrow each other's words.
 */

function rowsTable(rows: KeyRow[]): string {
  const lines = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"];
  for (const row of rows)
    lines.push(
      `| \`${row.path}\` | ${tableCell(row.type)} | ${row.default === undefined ? "" : `\`${tableCell(row.default)}\``} | ${tableCell(row.description ?? "")} |`,
    );
  return lines.join("\n");
}

export function configReference(root: string): string {
  const files = schemaFiles([join(root, "functions")]);
  const channelFolder = (file: string): string | undefined => {
    const parts = relative(join(root, "functions", "channels"), file).split(sep);
    return parts.length > 1 && !parts[0]!.startsWith("..") ? parts[0] : undefined;
  };
  const sharedDocs = keyDocs(files.filter((file) => channelFolder(file) === undefined));
  const shape = (baseConfigSchema as unknown as { shape: Record<string, unknown> }).shape;
  const sections: string[] = [];
  for (const key of Object.keys(shape)) {
    if (key === "channels") continue;
    sections.push(`## ${key}\n\n${rowsTable(keyRows(shape[key] as never, key, sharedDocs))}`);
  }
  for (const channel of channelDefinitions()) {
    const docs = keyDocs(
      files.filter((file) => [undefined, channel.id].includes(channelFolder(file))),
    );
    const rows = keyRows(channel.configSchema as never, `channels.${channel.id}`, docs);
    sections.push(
      `## channels.${channel.id}\n\nSetup: [${channel.id}](../channels/${channel.id}.md).\n\n${rowsTable(rows)}`,
    );
  }
  return `# Configuration keys

${GENERATED_NOTE}

Every key \`edgeclaw.json5\` may hold, as the config schema validates it: the key path (\`<id>\`
stands for a name you choose, \`[]\` for each entry of a list), its type, its default when it has
one, and what the code says about it. A key OpenClaw documents but edgeclaw does not read is
accepted with a warning ([configuration](../start/configuration.md) says how the file is checked).
A SecretRef is \`{ source: "env", id: "NAME" }\`, read from a Worker secret (locally \`.dev.vars\`).

${sections.join("\n\n")}
`;
}
