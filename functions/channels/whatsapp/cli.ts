import type { CommandSpec } from "../../../scripts/cli/command-spec.ts";
import { adminRequest } from "../../../scripts/cli/http.ts";
import type { DeviceLink } from "../companion/device-link.ts";

/**
 * `edgeclaw channels whatsapp link`: the device link the companion reports for a WhatsApp account
 * (GET /admin/companion/status, the connector's `link`), drawn in the terminal — the QR code from
 * the module rows the companion encoded, or the pairing code — and followed until the account is
 * linked (exit 0), logged out or replaced (exit 1), or `--wait` seconds pass. A QR code lasts 20 s:
 * the next one is drawn when the companion reports it.
 */

interface Report {
  channel: string;
  accountId: string;
  link?: DeviceLink;
}

const str = (value: string | boolean | undefined) =>
  typeof value === "string" && value ? value : undefined;

/** The account's link from /admin/companion/status (one deployment, or several). */
export function findLink(status: unknown, accountId: string): DeviceLink | undefined {
  const companion = (
    status as {
      companion?: { connectors?: Report[]; deployments?: Array<{ connectors?: Report[] }> };
    }
  ).companion;
  const deployments = companion?.deployments ?? (companion ? [companion] : []);
  for (const deployment of deployments)
    for (const report of deployment.connectors ?? [])
      if (report.channel === "whatsapp" && report.accountId === accountId && report.link)
        return report.link;
  return undefined;
}

/**
 * A QR code for a terminal, two module rows per line in half blocks. Light modules are drawn as
 * blocks: on the usual dark terminal they come out light, as a scanner expects.
 */
export function terminalQr(rows: string[]): string {
  const lines: string[] = [];
  for (let y = 0; y < rows.length; y += 2) {
    const top = rows[y]!;
    const bottom = rows[y + 1] ?? "0".repeat(top.length);
    let line = "";
    for (let x = 0; x < top.length; x += 1) {
      const upper = top[x] === "0";
      const lower = bottom[x] === "0";
      line += upper && lower ? "█" : upper ? "▀" : lower ? "▄" : " ";
    }
    lines.push(line);
  }
  return lines.join("\n");
}

export function describeLink(link: DeviceLink, accountId: string): string {
  const head = `WhatsApp (account ${accountId}): ${link.state}`;
  switch (link.state) {
    case "awaiting-qr":
      return [
        head,
        "Scan in WhatsApp → Settings → Linked devices → Link a device:",
        "",
        terminalQr(link.qrModules ?? []),
        "",
        link.expiresAt
          ? `(replaced by a new code at ${new Date(link.expiresAt).toLocaleTimeString()})`
          : "",
      ].join("\n");
    case "awaiting-pairing-code":
      return `${head}\nIn WhatsApp → Linked devices → Link a device → "Link with phone number instead", enter: ${link.pairingCode?.slice(0, 4)}-${link.pairingCode?.slice(4)}`;
    case "linked":
      return `${head}${link.me ? ` as ${link.me}` : ""}`;
    case "logged-out":
      return `${head}: ${link.reason ?? ""}\nRestart the companion to show a new QR code, then run this again.`;
    default:
      return `${head}${link.reason ? `: ${link.reason}` : ""}`;
  }
}

/** This channel's `edgeclaw` commands (scripts/cli/commands.ts finds them here). */
export const commands: CommandSpec[] = [
  {
    name: "channels whatsapp link",
    args: [],
    options: { account: "id", wait: "seconds" },
    summary:
      "show the QR code (or pairing code) to link the WhatsApp device, as the companion reports it, until it is linked (--wait 0: once)",
    async run({ options, connection, print }) {
      const accountId = str(options.account) ?? "default";
      const waitMs = Math.max(0, Number(str(options.wait) ?? "300")) * 1000;
      const deadline = Date.now() + waitMs;
      let shown = "";
      for (;;) {
        const status = await adminRequest(connection(), "GET", "/companion/status");
        const link = findLink(status, accountId);
        const text = link
          ? describeLink(link, accountId)
          : `WhatsApp (account ${accountId}): no link reported yet (is the companion running, with "whatsapp" in its ingress key's channels?)`;
        if (text !== shown) print(link ?? { state: null }, () => text);
        shown = text;
        if (link?.state === "linked") return 0;
        if (link && (link.state === "logged-out" || link.state === "replaced")) return 1;
        if (Date.now() >= deadline) return link ? 0 : 1;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    },
  },
];
