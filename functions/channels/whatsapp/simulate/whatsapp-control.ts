import type { IncomingMessage, ServerResponse } from "node:http";
import type { WaMessage } from "../companion/wa-socket.ts";

/**
 * The simulated WhatsApp's HTTP side, on the port its sockets use, for `edgeclaw simulate
 * whatsapp` (another process than the one running the fake):
 * - `GET /_control/state`: `{ connections, open }`, whether the companion's socket is up and linked;
 * - `POST /_control/scan` `{}`: scans the QR code the companion shows (links the device);
 * - `POST /_control/message` `{ from, text, group? }`: a user's message, in Baileys'
 *   `messages.upsert` shape (a group message names its sender as `participant`; the bot's number
 *   written as `@15550001111` is a mention, `mentionedJid`, as WhatsApp makes it) → `{ id, remoteJid }`;
 * - `GET /_control/sent?to=<jid>`: the texts the connector sent to that chat, oldest first.
 */
export const SIMULATED_BOT_NUMBER = "15550001111";
const BOT_MENTION = `@${SIMULATED_BOT_NUMBER}`;
const BODY_LIMIT = 64 * 1024;

let messageIds = 0;

/** A chat id from a number or a full JID (`+1555…` → `1555…@s.whatsapp.net`, a group id → `…@g.us`). */
export function simulatedJid(id: string, server: "s.whatsapp.net" | "g.us"): string {
  return id.includes("@") ? id : `${id.replace(/^\+/, "")}@${server}`;
}

/** What the HTTP side drives of the simulated WhatsApp (fake-whatsapp-server.ts). */
export interface ControlledWhatsApp {
  connections(): number;
  isOpen(): boolean;
  scan(): void;
  deliver(messages: WaMessage[]): void;
  readonly calls: ReadonlyArray<{ method: string; args: unknown[] }>;
}

export function controlHandler(fake: ControlledWhatsApp) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://fake.whatsapp");
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    try {
      if (request.method === "GET" && url.pathname === "/_control/state")
        return answer(200, { connections: fake.connections(), open: fake.isOpen() });
      if (request.method === "POST" && url.pathname === "/_control/scan") {
        fake.scan();
        return answer(200, {});
      }
      if (request.method === "POST" && url.pathname === "/_control/message") {
        const body = JSON.parse(await readBody(request)) as {
          from?: string;
          text?: string;
          group?: string;
        };
        if (typeof body.from !== "string" || typeof body.text !== "string")
          return answer(400, { error: "from and text are required" });
        const message = userMessage(body.from, body.text, body.group);
        fake.deliver([message]);
        return answer(200, { id: message.key.id, remoteJid: message.key.remoteJid });
      }
      if (request.method === "GET" && url.pathname === "/_control/sent") {
        const to = url.searchParams.get("to");
        const texts = fake.calls
          .filter((call) => call.method === "sendMessage" && call.args[0] === to)
          .map((call) => (call.args[1] as { text?: string } | undefined)?.text ?? "");
        return answer(200, texts);
      }
      answer(404, { error: `no ${request.method} ${url.pathname} on the simulated WhatsApp` });
    } catch (error) {
      answer(400, { error: error instanceof Error ? error.message : String(error) });
    }
  };
}

function userMessage(
  from: string,
  text: string,
  group: string | undefined,
): WaMessage & {
  key: { id: string; remoteJid: string };
} {
  const sender = simulatedJid(from, "s.whatsapp.net");
  const mentioned = text.includes(BOT_MENTION);
  messageIds += 1;
  return {
    key: {
      remoteJid: group ? simulatedJid(group, "g.us") : sender,
      // Phone-made ids; never the 3EB0EC… prefix of the linked device's own sends.
      id: `3A${Date.now().toString(16).toUpperCase()}${messageIds.toString(16).padStart(6, "0")}`,
      fromMe: false,
      ...(group ? { participant: sender } : {}),
    },
    messageTimestamp: Math.floor(Date.now() / 1000),
    pushName: "Simulated user",
    message: mentioned
      ? {
          extendedTextMessage: {
            text,
            contextInfo: { mentionedJid: [`${SIMULATED_BOT_NUMBER}@s.whatsapp.net`] },
          },
        }
      : { conversation: text },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
      if (body.length > BODY_LIMIT) reject(new Error("body too large"));
    });
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}
