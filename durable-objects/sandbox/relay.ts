import { migrate, type SchemaHost, type SchemaMigration } from "../lib/migrate.ts";
import {
  bareExecStatus,
  sandboxOpSchema,
  type ExecStatus,
  type LogAnswer,
  type SandboxOp,
  type StartOp,
} from "../../functions/sandbox/wire.ts";
import { egressOf, sameEgress, type Egress } from "./egress.ts";

/**
 * The sandbox Durable Object's memory of its container (durable-objects/sandbox.ts is the class):
 * what it forwarded, to which generation of the container, and how the container was started.
 *
 * A container's disk does not outlive it, so the host process inside cannot be the record that
 * makes a command run once: this is. Every start is written here (with the container's generation)
 * before it is forwarded; a start for a known id is forwarded as a status request (resume), never
 * as a start. A command of a generation that is gone (the container stopped, slept or crashed) is
 * answered "lost" without waking the container, and a host that no longer knows a recorded id
 * (it restarted under us) is answered "lost" too: reported, never run again.
 *
 * The runtime (start, forward, stop) is the Container class in production and a loopback fake in
 * the tests; this file holds no platform call of its own.
 */

export interface ContainerRuntime {
  /** Whether the container runs now (the platform's word). */
  running(): boolean;
  /** Starts it with this egress and waits until the host process answers. */
  start(egress: Egress): Promise<void>;
  /** POSTs the body to the host's /v1/sandbox; throws when the host cannot be reached. */
  forward(body: string, timeoutMs: number): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

export interface RelayAnswer {
  status: number;
  body: unknown;
}

/**
 * How long past its own timeout a command the host does not answer for may keep the container up:
 * the host kills a command at its timeout (SIGKILL of its process group), so this covers only the
 * kill and the exit record being written.
 */
const KILL_SLACK_MS = 30_000;
/** How long the relay waits for the host's word on one command when deciding to sleep. */
const AWAKE_CHECK_TIMEOUT_MS = 5_000;

const MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "sandbox relay: forwarded execs by generation, and the container's meta",
    statements: [
      `CREATE TABLE sandbox_execs (
         exec_id TEXT PRIMARY KEY,
         generation INTEGER NOT NULL,
         state TEXT NOT NULL,
         started_at INTEGER NOT NULL,
         timeout_seconds INTEGER NOT NULL,
         ended_at INTEGER
       )`,
      `CREATE INDEX sandbox_execs_open ON sandbox_execs(state, generation)`,
      `CREATE TABLE sandbox_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    ],
  },
  {
    version: 2,
    why: "when a session last asked about each command: one nobody asks about is an orphan",
    statements: [`ALTER TABLE sandbox_execs ADD COLUMN asked_at INTEGER`],
  },
];

interface ExecRecord {
  exec_id: string;
  generation: number;
  state: "open" | "ended";
  started_at: number;
  timeout_seconds: number;
  ended_at: number | null;
  asked_at: number | null;
  [column: string]: SqlStorageValue;
}

export interface RelayState {
  running: boolean;
  generation: number;
  egress: Egress | undefined;
  /** Commands forwarded to the current generation whose end nobody has been told yet. */
  openExecs: number;
  /** When the current generation started (ms), and the awake time of the ended ones. */
  awakeSince: number | null;
  awakeMsTotal: number;
  starts: number;
}

export class SandboxRelay {
  constructor(
    private readonly storage: SchemaHost,
    private readonly runtime: ContainerRuntime,
    private readonly now: () => number = Date.now,
  ) {
    migrate(storage, { name: "SandboxDO", migrations: MIGRATIONS });
  }

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  async handle(input: unknown): Promise<RelayAnswer> {
    const parsed = sandboxOpSchema.safeParse(input);
    if (!parsed.success)
      return refuse(400, `invalid request: ${parsed.error.issues[0]?.message}`, "invalid");
    const op = parsed.data;
    if (op.op === "probe") {
      if (!this.runtime.running()) await this.ensure({ kind: "none" });
      return this.forward(op, 0, undefined);
    }
    if (op.op === "start") return this.start(op);
    // Operators asking: never wakes a sleeping container.
    if (op.op === "status")
      return this.runtime.running()
        ? this.forward(op, 0, undefined)
        : refuse(409, "the sandbox container is asleep", "asleep");
    const row = this.record(op.execId);
    if (row) this.asked(row.exec_id);
    if (!row)
      return ok(
        op.op === "log" ? logOf(op.execId, "unknown") : bareExecStatus(op.execId, "unknown"),
      );
    if (!this.alive(row)) {
      // Its container is gone, and its output with it: the session keeps what it was told.
      if (op.op === "log")
        return refuse(410, "the sandbox container that ran this command has stopped", "gone");
      return ok(this.lost(row));
    }
    return this.forward(op, op.op === "poll" ? op.waitMs : 0, row);
  }

  private async start(op: StartOp): Promise<RelayAnswer> {
    const known = this.record(op.execId);
    if (known) this.asked(known.exec_id);
    if (known || op.resume) {
      if (!known) return ok(bareExecStatus(op.execId, "unknown"));
      if (!this.alive(known)) return ok(this.lost(known));
      return this.forward({ ...op, resume: true, files: undefined }, op.waitMs, known);
    }
    let refused: RelayAnswer | undefined;
    try {
      refused = await this.ensure(egressOf(op));
    } catch (error) {
      // Nothing was forwarded: the command did not start, and the caller may try again.
      return refuse(
        503,
        `the sandbox container could not start: ${error instanceof Error ? error.message : String(error)}`,
        "sandbox_unavailable",
      );
    }
    if (refused) return refused;
    // The host files commands by scope; the relay asks it about them by the same name.
    this.setMeta("scope", op.scope);
    // Recorded before it is forwarded: from here on this id is never started again.
    this.sql.exec(
      `INSERT INTO sandbox_execs(exec_id, generation, state, started_at, timeout_seconds, asked_at) VALUES(?, ?, 'open', ?, ?, ?)`,
      op.execId,
      this.generation(),
      this.now(),
      op.timeoutSeconds,
      this.now(),
    );
    return this.forward(op, op.waitMs, this.record(op.execId));
  }

  /** The container runs with `egress`, started anew if it ran with another and nothing is open. */
  private async ensure(egress: Egress): Promise<RelayAnswer | undefined> {
    const current = this.meta<Egress>("egress");
    if (!this.runtime.running()) this.containerStopped();
    else {
      if (current && sameEgress(current, egress)) return undefined;
      if (this.openCount() > 0)
        return refuse(
          409,
          "this scope's sandbox runs commands under another network setting (agents.defaults.sandbox.docker.network / allowedHosts changed); it restarts with the new one once they end",
          "egress_mismatch",
        );
      await this.runtime.stop();
      this.containerStopped();
    }
    this.setMeta("generation", this.generation() + 1);
    this.setMeta("egress", egress);
    this.setMeta("awakeSince", this.now());
    this.setMeta("starts", (this.meta<number>("starts") ?? 0) + 1);
    await this.runtime.start(egress);
    return undefined;
  }

  private async forward(
    op: SandboxOp,
    waitMs: number,
    row: ExecRecord | undefined,
  ): Promise<RelayAnswer> {
    let answer: RelayAnswer;
    try {
      answer = await this.runtime.forward(JSON.stringify(op), waitMs + 30_000);
    } catch (error) {
      // The host did not answer. If the container is gone with it, so is the command.
      if (row && !this.runtime.running()) return ok(this.lost(row));
      return refuse(
        502,
        `the sandbox container did not answer: ${error instanceof Error ? error.message : String(error)}`,
        "unreachable",
      );
    }
    if (answer.status !== 200 || !row) return answer;
    const state = (answer.body as { state?: string } | null)?.state;
    // The host restarted under us and has never heard of a command recorded here: it is lost.
    if (state === "unknown")
      return op.op === "log"
        ? refuse(410, "the sandbox container that ran this command has restarted", "gone")
        : ok(this.lost(row));
    if (state === "exited" || state === "lost") this.end(row.exec_id);
    return answer;
  }

  /**
   * The container stopped (slept, crashed, was replaced): its awake time is added up. Called from
   * onStop and whenever the relay sees it not running (the platform reports a stop lazily).
   */
  containerStopped(): void {
    const since = this.meta<number>("awakeSince");
    if (since === undefined || since === null) return;
    this.setMeta("awakeMsTotal", (this.meta<number>("awakeMsTotal") ?? 0) + (this.now() - since));
    this.setMeta("awakeSince", null);
  }

  /**
   * Whether the container must stay up past its idle time (`sleepAfterMs`, asked when it runs
   * out). Only a command the session has not been told the end of can hold it, and only while
   * - it still runs in the container and is within its own timeout (the host kills it then), or,
   *   for a command with no timeout, someone asked about it within `sleepAfterMs` — a live session
   *   polls a running command at least every 30 s, so an orphan (its session gone, or never
   *   polling) holds nothing once its own timeout or one idle period has passed;
   * - or it ended less than `sleepAfterMs` ago: its result (output, file changes) lives only in
   *   this container, and the session gets one idle period to collect it.
   * The host is asked directly (a status request that changes no record); one that does not answer
   * is held by the time bounds alone.
   */
  async shouldStayAwake(sleepAfterMs: number): Promise<boolean> {
    const now = this.now();
    for (const row of this.openRows()) {
      const deadline =
        row.timeout_seconds > 0 ? row.started_at + row.timeout_seconds * 1000 + KILL_SLACK_MS : 0;
      const asked = (row.asked_at ?? row.started_at) > now - sleepAfterMs;
      const status = await this.hostStatus(row);
      if (!status) {
        if (now < deadline || (row.timeout_seconds === 0 && asked)) return true;
        continue;
      }
      if (status.state === "running") {
        if (now < deadline || (row.timeout_seconds === 0 && asked)) return true;
        continue;
      }
      if (status.state === "exited" && (status.finishedAt ?? 0) > now - sleepAfterMs) return true;
    }
    return false;
  }

  private async hostStatus(row: ExecRecord): Promise<ExecStatus | undefined> {
    try {
      const answer = await this.runtime.forward(
        JSON.stringify({
          op: "poll",
          scope: this.meta<string>("scope") ?? "",
          execId: row.exec_id,
          waitMs: 0,
          offset: 0,
        }),
        AWAKE_CHECK_TIMEOUT_MS,
      );
      return answer.status === 200 ? (answer.body as ExecStatus) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The open commands of the running container, for operators (`edgeclaw status`). */
  openCommands(): Array<{ execId: string; startedAt: number; timeoutSeconds: number }> {
    return this.openRows().map((row) => ({
      execId: row.exec_id,
      startedAt: row.started_at,
      timeoutSeconds: row.timeout_seconds,
    }));
  }

  state(): RelayState {
    if (!this.runtime.running()) this.containerStopped();
    return {
      running: this.runtime.running(),
      generation: this.generation(),
      egress: this.meta<Egress>("egress"),
      openExecs: this.openCount(),
      awakeSince: this.meta<number>("awakeSince") ?? null,
      awakeMsTotal: this.meta<number>("awakeMsTotal") ?? 0,
      starts: this.meta<number>("starts") ?? 0,
    };
  }

  private alive(row: ExecRecord): boolean {
    return this.runtime.running() && row.generation === this.generation();
  }

  private lost(row: ExecRecord): ExecStatus {
    this.end(row.exec_id);
    return {
      ...bareExecStatus(row.exec_id, "lost"),
      startedAt: row.started_at,
      finishedAt: this.now(),
    };
  }

  private end(execId: string): void {
    this.sql.exec(
      `UPDATE sandbox_execs SET state = 'ended', ended_at = COALESCE(ended_at, ?) WHERE exec_id = ?`,
      this.now(),
      execId,
    );
    // Ended records are kept a day (a late resume still finds them), then dropped.
    this.sql.exec(
      `DELETE FROM sandbox_execs WHERE state = 'ended' AND ended_at < ?`,
      this.now() - 24 * 3_600_000,
    );
  }

  private asked(execId: string): void {
    this.sql.exec(`UPDATE sandbox_execs SET asked_at = ? WHERE exec_id = ?`, this.now(), execId);
  }

  private record(execId: string): ExecRecord | undefined {
    return this.sql
      .exec<ExecRecord>(`SELECT * FROM sandbox_execs WHERE exec_id = ?`, execId)
      .toArray()[0];
  }

  private openRows(): ExecRecord[] {
    if (!this.runtime.running()) return [];
    return this.sql
      .exec<ExecRecord>(
        `SELECT * FROM sandbox_execs WHERE state = 'open' AND generation = ?`,
        this.generation(),
      )
      .toArray();
  }

  private openCount(): number {
    return this.openRows().length;
  }

  private generation(): number {
    return this.meta<number>("generation") ?? 0;
  }

  private meta<T>(key: string): T | undefined {
    const row = this.sql
      .exec<{ value: string }>(`SELECT value FROM sandbox_meta WHERE key = ?`, key)
      .toArray()[0];
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  private setMeta(key: string, value: unknown): void {
    this.sql.exec(
      `INSERT INTO sandbox_meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      key,
      JSON.stringify(value),
    );
  }
}

function ok(body: unknown): RelayAnswer {
  return { status: 200, body };
}

function refuse(status: number, error: string, code: string): RelayAnswer {
  return { status, body: { error, code } };
}

function logOf(execId: string, state: LogAnswer["state"]): LogAnswer {
  return { execId, lines: [], offset: 0, totalLines: 0, state, exitCode: null };
}
