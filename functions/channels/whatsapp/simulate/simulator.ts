import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { ChannelSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { startFakeWhatsAppServer } from "./fake-whatsapp-server.ts";
import { simulatedJid } from "./whatsapp-control.ts";

/**
 * WhatsApp played by the simulated WhatsApp (fake-whatsapp-server.ts): the companion's connector
 * runs its Baileys session against it over a loopback socket (bridge-socket.ts), told so by its
 * own environment (`EDGECLAW_WHATSAPP_SIMULATOR_URL`, which dev hands only to the companion it
 * starts). The first message links the device first, as scanning the QR code would. A simulated
 * message is a DM from `--from` (a number, default +15550009999) unless `--group` names a group;
 * the bot is +15550001111, mentioned by writing `@15550001111`.
 */
const DEFAULT_SENDER = "15550009999";

function chatOf(message: SimulatedMessage): string {
  return message.group
    ? simulatedJid(message.group, "g.us")
    : simulatedJid(message.from ?? DEFAULT_SENDER, "s.whatsapp.net");
}

async function state(fakeUrl: string): Promise<{ connections: number; open: boolean }> {
  return (await (await fetch(`${fakeUrl}/_control/state`)).json()) as {
    connections: number;
    open: boolean;
  };
}

export const simulator: ChannelSimulator = {
  id: "whatsapp",
  async startFake() {
    const fake = await startFakeWhatsAppServer();
    return { url: fake.controlUrl, stop: fake.stop };
  },
  prepare(block, fakeUrl) {
    return {
      block: block ?? {},
      env: {},
      secrets: {},
      companionEnv: { EDGECLAW_WHATSAPP_SIMULATOR_URL: fakeUrl.replace(/^http/, "ws") },
    };
  },
  socket: {
    async deliver(message, { fakeUrl, deadline }) {
      await untilConnected(
        "WhatsApp",
        "the companion has not opened a socket to the simulated WhatsApp",
        deadline,
        async () => (await state(fakeUrl)).connections > 0,
      );
      if (!(await state(fakeUrl)).open) {
        await fetch(`${fakeUrl}/_control/scan`, { method: "POST", body: "{}" });
        await untilConnected(
          "WhatsApp",
          "the simulated device did not come back linked after the QR scan",
          deadline,
          async () => (await state(fakeUrl)).open,
        );
      }
      const res = await fetch(`${fakeUrl}/_control/message`, {
        method: "POST",
        body: JSON.stringify({
          from: message.from ?? DEFAULT_SENDER,
          text: message.text,
          ...(message.group ? { group: message.group } : {}),
        }),
      });
      if (!res.ok) throw new Error(`the simulated WhatsApp answered ${res.status}`);
      const { id, remoteJid } = (await res.json()) as { id: string; remoteJid: string };
      return { eventId: `${remoteJid}:${id}` };
    },
  },
  async replies(fakeUrl, message) {
    const query = new URLSearchParams({ to: chatOf(message) });
    return (await (await fetch(`${fakeUrl}/_control/sent?${query}`)).json()) as string[];
  },
};
