import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { ConnectorAccount } from "../../src/connector.ts";
import { OutboundNotConnectedError } from "../../src/outbound.ts";
import {
  whatsappConnector,
  type WhatsAppConnector,
} from "../../../functions/channels/whatsapp/companion/connector.ts";
import { messageIdFor } from "../../../functions/channels/whatsapp/companion/message-id.ts";
import {
  baileysRuntime,
  type WaAuthRuntime,
} from "../../../functions/channels/whatsapp/companion/wa-socket.ts";
import { FakeWhatsAppWorld } from "../../../functions/channels/whatsapp/simulate/fake-wa-socket.ts";
import { MemoryContext, until } from "./memory-context.ts";

/**
 * The WhatsApp connector against a fake of Baileys' socket that emits Baileys' real event shapes
 * (simulate/fake-wa-socket.ts), with Baileys' own auth helpers (BufferJSON, initAuthCreds, the
 * cacheable key store) over the companion state: linking by QR and by pairing code, the link state
 * machine's reconnects and stops, what it forwards, and what it sends.
 */

let helpers: WaAuthRuntime;
before(async () => {
  helpers = await baileysRuntime();
});

const account = (settings: Record<string, unknown> = {}): ConnectorAccount => ({
  channel: "whatsapp",
  accountId: "default",
  label: "WhatsApp",
  settings,
  secretEnv: {},
});

async function started(
  settings: Record<string, unknown> = {},
  ctx = new MemoryContext(account(settings)),
) {
  const world = new FakeWhatsAppWorld(helpers);
  const connector = whatsappConnector(ctx.account, {
    runtime: async () => world.runtime(),
    backoff: { initialMs: 50, maxMs: 100, stableMs: 60_000 },
  });
  await connector.start(ctx);
  return { ctx, world, connector };
}

const linkStates = (ctx: MemoryContext) => ctx.statuses.map((s) => s.link?.state);

/** Links a fresh device by scanning its QR code, then waits for the reopened socket. */
async function linked(settings: Record<string, unknown> = {}) {
  const run = await started(settings);
  await until(
    () => run.connector.linkState.state === "awaiting-qr" || undefined,
    2_000,
    "a QR code",
  );
  await run.world.current!.scan();
  await until(() => run.connector.linkState.state === "linked" || undefined, 2_000, "linked");
  return run;
}

const text = (chat: string, body: string, id: string, participant?: string) => ({
  key: { remoteJid: chat, id, fromMe: false, ...(participant ? { participant } : {}) },
  messageTimestamp: { low: 1_760_000_000, high: 0, unsigned: true, toNumber: () => 1_760_000_000 },
  pushName: "Alice",
  message: {
    conversation: body,
    messageContextInfo: { messageSecret: new Uint8Array(32) },
  },
});

describe("WhatsApp connector: linking", () => {
  it("shows a QR code (encoded for the page), links on scan: creds and pre-keys go to the Worker's state, and the socket Baileys asks to restart (515) is replaced at once", async () => {
    const { ctx, world, connector } = await started();
    await until(() => connector.linkState.state === "awaiting-qr" || undefined, 2_000, "a QR code");
    const shown = ctx.statuses.at(-1)!;
    assert.equal(shown.state, "connecting");
    assert.equal(shown.link?.qr, "2@fake-ref-1,noise,identity,adv");
    assert.ok(shown.link!.qrModules!.length >= 21, "the QR code as module rows");
    assert.ok(shown.link!.qrModules!.every((row) => /^[01]+$/.test(row)));
    assert.ok(shown.link!.expiresAt! > Date.now());

    await world.current!.scan();
    await until(() => connector.linkState.state === "linked" || undefined, 2_000, "linked");
    assert.equal(world.sockets.length, 2, "a new socket after restartRequired");
    assert.ok(world.sockets[0]!.ended, "the old socket is closed");
    assert.deepEqual(linkStates(ctx).slice(-4), [
      "awaiting-qr",
      "reconnecting",
      "connecting",
      "linked",
    ]);
    assert.equal(ctx.statuses.at(-1)!.state, "ready");
    const creds = await until(() => ctx.values.get("auth:1:creds"), 2_000, "creds written");
    assert.equal(JSON.parse(creds).registered, true);
    assert.equal(JSON.parse(creds).me.id, "15550001111:7@s.whatsapp.net");
    // Keys in Baileys' BufferJSON form: bytes survive the round trip through the state.
    const preKey = JSON.parse(
      ctx.values.get("auth:1:pre-key:1")!,
      helpers.BufferJSON.reviver as never,
    );
    assert.ok(preKey.private instanceof Uint8Array);
    assert.equal(preKey.private[0], 1);
    await connector.stop();
  });

  it("a device linked before connects from the stored state without a QR code, and reads its keys back", async () => {
    const first = await linked();
    await first.connector.stop();
    const ctx = new MemoryContext(account());
    for (const [key, value] of first.ctx.values) ctx.values.set(key, value);
    const { world, connector } = await started({}, ctx);
    await until(() => connector.linkState.state === "linked" || undefined, 2_000, "linked");
    assert.ok(!linkStates(ctx).includes("awaiting-qr"));
    assert.deepEqual(linkStates(ctx), ["connecting", "linked"]);
    const keys = await world.current!.options.auth.keys.get("pre-key", ["1", "2", "999"]);
    assert.deepEqual(Object.keys(keys).sort(), ["1", "2"]);
    await connector.stop();
  });

  it("reconnects after a transient close with backoff, and after restartRequired at once", async () => {
    const { ctx, world, connector } = await linked();
    world.current!.close(428);
    assert.equal(connector.linkState.state, "reconnecting");
    assert.equal(ctx.statuses.at(-1)!.state, "backoff");
    assert.match(ctx.statuses.at(-1)!.link!.reason!, /connection closed \(428\)/);
    await until(() => connector.linkState.state === "linked" || undefined, 2_000, "linked again");
    assert.equal(world.sockets.length, 3);
    world.current!.close(408);
    await until(() => world.sockets.length === 4 || undefined, 2_000, "a fourth socket");
    await until(() => connector.linkState.state === "linked" || undefined, 2_000, "linked again");
    await connector.stop();
  });

  it("logged out from the phone (401): stops for good, forgets the keys, and refuses sends until relinked", async () => {
    const { ctx, world, connector } = await linked();
    world.current!.close(401);
    assert.equal(connector.linkState.state, "logged-out");
    assert.equal(ctx.statuses.at(-1)!.state, "fatal");
    assert.match(ctx.statuses.at(-1)!.lastError!, /logged out.*link the device again/);
    await until(() => ctx.values.get("auth:generation"), 2_000, "the next generation");
    assert.equal(ctx.values.get("auth:generation"), "2");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(world.sockets.length, 2, "no reconnect after loggedOut");
    await assert.rejects(
      connector.send({
        v: 1,
        commandId: "c-1",
        channel: "whatsapp",
        accountId: "default",
        op: "send",
        target: { conversationId: "15551230000@s.whatsapp.net" },
        payload: { text: "hi" },
      }),
      OutboundNotConnectedError,
    );
    // A restart (the relink) starts from empty keys: a QR code again.
    const again = new MemoryContext(account());
    for (const [key, value] of ctx.values) again.values.set(key, value);
    const next = await started({}, again);
    await until(() => next.connector.linkState.state === "awaiting-qr" || undefined, 2_000, "QR");
    await next.connector.stop();
  });

  it("another session took over (440): stops without fighting it", async () => {
    const { world, connector } = await linked();
    world.current!.close(440);
    assert.equal(connector.linkState.state, "replaced");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(world.sockets.length, 2);
    await connector.stop();
  });

  it("with pairingPhoneNumber: asks for a pairing code once and reports it instead of QR codes", async () => {
    const { ctx, world, connector } = await started({ pairingPhoneNumber: "+15557654321" });
    await until(
      () => connector.linkState.state === "awaiting-pairing-code" || undefined,
      2_000,
      "code",
    );
    assert.deepEqual(world.pairingRequests, ["15557654321"]);
    assert.equal(ctx.statuses.at(-1)!.link?.pairingCode, "FAKE1234");
    world.current!.emit("connection.update", { qr: "2@another-ref" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(world.pairingRequests, ["15557654321"], "asked once per socket");
    assert.ok(!linkStates(ctx).includes("awaiting-qr"));
    await world.current!.scan();
    await until(() => connector.linkState.state === "linked" || undefined, 2_000, "linked");
    await connector.stop();
  });
});

describe("WhatsApp connector: events and sends", () => {
  let run: { ctx: MemoryContext; world: FakeWhatsAppWorld; connector: WhatsAppConnector };
  before(async () => {
    run = await linked();
  });

  it("forwards messages.upsert (notify and offline append) raw and JSON-safe, keyed remoteJid:id; skips status and the upsert copy of a reaction", async () => {
    const { ctx, world } = run;
    const socket = world.current!;
    socket.deliver([text("15551230000@s.whatsapp.net", "hello", "3EB0A1")]);
    socket.deliver(
      [text("120363000000000009@g.us", "offline", "3EB0A2", "15551230001@s.whatsapp.net")],
      "append",
    );
    socket.deliver([text("status@broadcast", "story", "3EB0A3", "15551230000@s.whatsapp.net")]);
    socket.deliver([
      {
        key: { remoteJid: "15551230000@s.whatsapp.net", id: "3EB0A4", fromMe: false },
        message: { reactionMessage: { key: { id: "x" }, text: "👍" } },
      },
    ]);
    socket.emit("messages.reaction", [
      {
        key: { remoteJid: "15551230000@s.whatsapp.net", id: "3EB0ECBOT", fromMe: true },
        reaction: {
          key: { remoteJid: "15551230000@s.whatsapp.net", id: "3EB0A5", fromMe: false },
          text: "👍",
        },
      },
    ]);
    await until(() => ctx.stored.length >= 3 || undefined, 2_000, "forwarded");
    assert.deepEqual(
      ctx.stored.map((e) => e.eventId),
      [
        "15551230000@s.whatsapp.net:3EB0A1",
        "120363000000000009@g.us:3EB0A2",
        "15551230000@s.whatsapp.net:3EB0A5",
      ],
    );
    const first = ctx.stored[0]!.payload as {
      type: string;
      self: { id: string; lid?: string };
      message: { messageTimestamp: number; message: Record<string, unknown> };
    };
    assert.equal(first.type, "message");
    assert.deepEqual(first.self, {
      id: "15550001111:7@s.whatsapp.net",
      lid: "99887766554433:7@lid",
    });
    assert.equal(first.message.messageTimestamp, 1_760_000_000, "a Long becomes a number");
    assert.deepEqual(
      first.message.message,
      { conversation: "hello", messageContextInfo: {} },
      "bytes left out",
    );
    assert.equal((ctx.stored[2]!.payload as { type: string }).type, "reaction");
  });

  it("sends text with a message id derived from the command (the same command, the same id), quotes, types and marks read", async () => {
    const { world, connector } = run;
    const command = {
      v: 1 as const,
      commandId: "wa-test-1",
      channel: "whatsapp",
      accountId: "default",
      op: "send" as const,
      target: { conversationId: "120363000000000009@g.us", replyToId: "3EB0A2" },
      payload: { text: "*hi*", quotedParticipant: "15551230001@s.whatsapp.net" },
    };
    const receipt = await connector.send(command);
    assert.deepEqual(receipt.platformMessageIds, [messageIdFor("wa-test-1")]);
    assert.match(receipt.platformMessageIds[0]!, /^3EB0EC[0-9A-F]{16}$/);
    await connector.send(command);
    assert.deepEqual(
      world.sent.map((s) => s.messageId),
      [messageIdFor("wa-test-1"), messageIdFor("wa-test-1")],
      "a resend is the same WhatsApp message",
    );
    assert.deepEqual(world.sent[0]!.quoted, {
      remoteJid: "120363000000000009@g.us",
      id: "3EB0A2",
      fromMe: false,
      participant: "15551230001@s.whatsapp.net",
    });
    const sent = await world.current!.options.getMessage({ id: messageIdFor("wa-test-1") });
    assert.deepEqual(sent, { conversation: "*hi*" }, "kept for a recipient's retry request");

    await connector.send({
      ...command,
      commandId: "wa-t",
      op: "typing",
      payload: { presence: "composing" },
    });
    await connector.send({
      ...command,
      commandId: "wa-r",
      op: "markRead",
      target: { conversationId: "120363000000000009@g.us", messageId: "3EB0A2" },
      payload: { participant: "15551230001@s.whatsapp.net" },
    });
    assert.deepEqual(world.presences, [{ type: "composing", jid: "120363000000000009@g.us" }]);
    assert.deepEqual(world.reads, [
      {
        remoteJid: "120363000000000009@g.us",
        id: "3EB0A2",
        fromMe: false,
        participant: "15551230001@s.whatsapp.net",
      },
    ]);
    await assert.rejects(connector.send({ ...command, op: "edit" }), /does not take edit/);
  });
});
