import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import {
  lastReadyForQuery,
  startPgliteServer,
  type PgliteServer,
} from "../../scripts/lib/pglite-server.ts";

/**
 * Two connections' extended-protocol batches sent message by message, interleaved on the wire, as
 * two Durable Objects' queries arrive at local Postgres. Each must bind its own statement: with
 * turns per message (pglite-socket), A's Bind met B's three-parameter statement and failed.
 */

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([head, body]);
}

const cstr = (text: string) => Buffer.from(`${text}\0`, "utf8");
const int16 = (value: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(value);
  return b;
};
const int32 = (value: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(value);
  return b;
};

function startup(): Buffer {
  const body = Buffer.concat([
    int32(196608),
    cstr("user"),
    cstr("postgres"),
    cstr("database"),
    cstr("postgres"),
    Buffer.from([0]),
  ]);
  return Buffer.concat([int32(4 + body.length), body]);
}

const parse = (sql: string) => message("P", Buffer.concat([cstr(""), cstr(sql), int16(0)]));
function bind(params: string[]): Buffer {
  const values = params.flatMap((p) => [int32(Buffer.byteLength(p)), Buffer.from(p)]);
  return message(
    "B",
    Buffer.concat([cstr(""), cstr(""), int16(0), int16(params.length), ...values, int16(0)]),
  );
}
const execute = () => message("E", Buffer.concat([cstr(""), int32(0)]));
const sync = () => message("S", Buffer.alloc(0));

/** A raw client: collects what the server sends and waits for the next ReadyForQuery. */
class RawClient {
  private received = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      if (lastReadyForQuery(this.received)) this.waiting?.();
    });
  }
  static async open(port: number): Promise<RawClient> {
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    const client = new RawClient(socket);
    socket.write(startup());
    await client.ready();
    return client;
  }
  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }
  /** Resolves with everything received up to and including the next ReadyForQuery. */
  async ready(): Promise<Buffer> {
    if (!lastReadyForQuery(this.received))
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    const all = this.received;
    this.received = Buffer.alloc(0);
    return all;
  }
  close(): void {
    this.socket.destroy();
  }
}

/** Error messages ('E') and data rows ('D', first column as text) in a backend answer. */
function read(answer: Buffer): { errors: string[]; rows: string[] } {
  const errors: string[] = [];
  const rows: string[] = [];
  for (let offset = 0; offset + 5 <= answer.length; ) {
    const type = String.fromCharCode(answer[offset]!);
    const length = answer.readInt32BE(offset + 1);
    const body = answer.subarray(offset + 5, offset + 1 + length);
    if (type === "E") errors.push(body.toString("utf8").replace(/\0/g, " ").trim());
    if (type === "D") {
      const size = body.readInt32BE(2);
      rows.push(body.subarray(6, 6 + size).toString("utf8"));
    }
    offset += 1 + length;
  }
  return { errors, rows };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("local Postgres server", () => {
  let db: PGlite;
  let server: PgliteServer;
  before(async () => {
    db = await PGlite.create();
    server = await startPgliteServer({ db, host: "127.0.0.1" });
  });
  after(async () => {
    await server.stop();
    await db.close();
  });

  it("keeps each connection's Parse/Bind/Execute/Sync together when two interleave on the wire", async () => {
    const a = await RawClient.open(server.port);
    const b = await RawClient.open(server.port);
    a.send(parse("select ($1::int + 1)::text"));
    await tick();
    b.send(parse("select concat($1::text, $2::text, $3::text)"));
    await tick();
    a.send(bind(["41"]));
    await tick();
    b.send(bind(["x", "y", "z"]));
    await tick();
    a.send(execute());
    b.send(execute());
    await tick();
    a.send(sync());
    b.send(sync());
    const [fromA, fromB] = await Promise.all([a.ready(), b.ready()]);
    assert.deepEqual(read(fromA), { errors: [], rows: ["42"] });
    assert.deepEqual(read(fromB), { errors: [], rows: ["xyz"] });
    a.close();
    b.close();
  });

  it("keeps a transaction on its connection, and rolls back one whose connection goes away", async () => {
    await db.exec("create table if not exists turns (n int)");
    const a = await RawClient.open(server.port);
    const b = await RawClient.open(server.port);
    const simple = (sql: string) => message("Q", cstr(sql));
    a.send(simple("begin; insert into turns values (1);"));
    await a.ready();
    b.send(simple("select count(*)::text from turns"));
    await tick();
    a.close();
    const counted = read(await b.ready());
    assert.deepEqual(counted, { errors: [], rows: ["0"] });
    b.close();
  });
});
