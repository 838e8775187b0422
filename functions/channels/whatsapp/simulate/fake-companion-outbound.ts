import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { SigningKey } from "../../companion/signature.ts";
import { startHttp } from "../../../../companion/src/http.ts";
import type { OutboundCommand } from "../../../../companion/src/outbound.ts";
import { messageIdFor } from "../companion/message-id.ts";

/**
 * The companion's `POST /v1/outbound` as the Worker reaches it (the real HTTP surface,
 * companion/src/http.ts: signature, Idempotency-Key, receipts, joined in-flight duplicates) with a
 * linked WhatsApp account that records what it was told to do instead of holding a Baileys
 * session. Message ids are the connector's own (companion/message-id.ts). A control server beside
 * it answers `GET /_control/commands?to=<jid>` with the commands executed for that chat (a
 * duplicate answered from the receipts is not executed again, so it is not listed twice), and
 * `POST /_control/offline` / `online` take the account's session away and back (409 not_connected).
 */
export interface FakeCompanionOutbound {
  outboundUrl: string;
  controlUrl: string;
  executed: OutboundCommand[];
  stop(): Promise<void>;
}

export async function startFakeCompanionOutbound(
  keys: SigningKey[],
): Promise<FakeCompanionOutbound> {
  const executed: OutboundCommand[] = [];
  const receipts = new Map<string, unknown>();
  let online = true;
  const sender = {
    async send(command: OutboundCommand) {
      executed.push(command);
      return {
        platformMessageIds: command.op === "send" ? [messageIdFor(command.commandId)] : [],
        sentAt: Date.now(),
      };
    },
  };
  const http = await startHttp(
    {
      outboundKeys: keys,
      ready: () => ({ ready: true, detail: {} }),
      sender: (channel) => (channel === "whatsapp" && online ? sender : undefined),
      receipts: {
        get: (commandId) => receipts.get(commandId),
        save: (commandId, answer) => receipts.set(commandId, answer),
      },
      log: () => undefined,
    },
    "127.0.0.1",
    0,
  );
  const control: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://control");
    if (
      req.method === "POST" &&
      (url.pathname === "/_control/offline" || url.pathname === "/_control/online")
    ) {
      online = url.pathname.endsWith("online");
      res.writeHead(200).end("{}");
      return;
    }
    const to = url.searchParams.get("to");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(executed.filter((c) => !to || c.target.conversationId === to)));
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  return {
    outboundUrl: `http://127.0.0.1:${http.port}`,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    executed,
    stop: async () => {
      for (const server of [http.server, control]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
