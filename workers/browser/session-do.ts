import { DurableObject } from "cloudflare:workers";
import {
  type BrowserCall,
  type BrowserReply,
  type BrowserSettings,
  READ_ONLY_ACTIONS,
} from "../../functions/agent/browser-wire.ts";
import { BrowserActionError, runAction } from "./actions.ts";
import { CallStore } from "./call-store.ts";
import type { BrowserWorkerEnv } from "./endpoint.ts";
import { endHostedSession, LiveBrowser } from "./live-browser.ts";

/**
 * One agent session's browser (one object per agent + session key). It keeps the Browser Run
 * session id and the current tab in SQLite, so a new instance of the object reconnects to the same
 * hosted browser (its tabs intact) while Browser Run keeps it (`keep_alive`, at most 10 min with
 * nobody connected); when the platform has ended it, a new one is launched and the answer says the
 * tabs are gone. Calls of one session run one at a time, each recorded by tool-call id
 * (call-store.ts). The alarm closes the tabs and ends the hosted browser once the session has been
 * idle `browser.tabCleanup.idleMinutes`, so nothing is billed for a forgotten browser.
 *
 * Metering: Browser Run bills the time a browser is open, so that is what is counted — from launch
 * to close, charged to the UTC day at each call and at close; `maxSecondsPerSessionDay` refuses new
 * work once a day's time is used up. Each reply hands over all time charged since the last reply
 * (`browserMs`), the idle close's tail included, for the main Worker's meter (budgets, /usage).
 */

interface SessionRow {
  session_id: string | null;
  current_tab: string | null;
  opened_at: number | null;
  charged_at: number | null;
  last_used_at: number | null;
  [column: string]: SqlStorageValue;
}

export interface BrowserDoEnv extends BrowserWorkerEnv {}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class BrowserSessionDO extends DurableObject<BrowserDoEnv> {
  private readonly calls: CallStore;
  private live?: LiveBrowser;
  /** Calls of one session run in turn: two at once would act on the same tab. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: BrowserDoEnv) {
    super(ctx, env);
    this.calls = new CallStore(ctx.storage.sql, crypto.randomUUID());
  }

  call(call: BrowserCall): Promise<BrowserReply> {
    const next = this.queue.then(() => this.run(call));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private row(): SessionRow | undefined {
    return this.ctx.storage.sql
      .exec<SessionRow>(`SELECT * FROM browser_session WHERE id = 1`)
      .toArray()[0];
  }

  private async run(call: BrowserCall): Promise<BrowserReply> {
    const started = Date.now();
    const { action } = call.args;
    const recorded = this.calls.begin(
      call.toolCallId,
      action,
      started,
      READ_ONLY_ACTIONS.has(action),
    );
    if (recorded.kind === "done") return { ...recorded.reply, replayed: true };
    if (recorded.kind === "interrupted") {
      const reply: BrowserReply = {
        text: `browser ${action}: this call was cut off while it ran (the browser service restarted), so whether it took effect is unknown and it is not repeated. Take a snapshot to see the page as it is now.`,
        isError: true,
        browserMs: 0,
      };
      this.calls.finish(call.toolCallId, reply, Date.now());
      return reply;
    }
    let reply: BrowserReply;
    try {
      reply = await this.perform(call);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      reply = {
        text:
          error instanceof BrowserActionError ? message : `browser ${action} failed: ${message}`,
        isError: true,
        browserMs: 0,
      };
    }
    const now = Date.now();
    this.charge(now);
    reply.browserMs = this.takeUnreported();
    this.touch(now, call.settings);
    this.calls.finish(call.toolCallId, reply, now);
    return reply;
  }

  private async perform(call: BrowserCall): Promise<BrowserReply> {
    const { args, settings } = call;
    const row = this.row();
    if (args.action === "status") return { text: this.statusText(row, settings), browserMs: 0 };
    if (args.action === "stop") {
      await this.end();
      return { text: "browser stopped; its tabs are closed", browserMs: 0 };
    }
    const usedMs = this.usedToday(Date.now());
    if (settings.maxMsPerDay > 0 && usedMs >= settings.maxMsPerDay)
      throw new BrowserActionError(
        `browser time cap reached: this session used ${Math.round(usedMs / 1000)} s of browser time today (browser.maxSecondsPerSessionDay ${settings.maxMsPerDay / 1000}); it resets at 00:00 UTC`,
      );
    let live = await this.openBrowser(settings, row);
    if (args.action === "start")
      return {
        text: `${this.replacedNote(live)}${this.statusText(this.row(), settings)}`,
        browserMs: 0,
      };
    const attempt = () =>
      runAction({ live, args, settings, current: this.row()?.current_tab ?? undefined });
    let outcome: Awaited<ReturnType<typeof runAction>>;
    try {
      outcome = await attempt();
    } catch (error) {
      // The socket died under the call (its loss shows only when it is used): a read-only action
      // reconnects and runs again; any other may have taken effect, so it is not repeated.
      if (error instanceof BrowserActionError) throw error;
      // Lost is what the platform says first: a session it ended is gone however the socket
      // behaves (through workerd the failed call can come with no close event at all, seen in a
      // quiet preview). A session still listed may have lost only this connection, whose close
      // event can trail the failed call by over a second on a loaded machine: wait for it
      // (bounded) before taking the error as the page's own.
      const lost = (await live.hostedSessionEnded(this.env)) || !(await stillConnected(live));
      if (!lost) throw error;
      this.live = undefined;
      if (!READ_ONLY_ACTIONS.has(args.action))
        throw new BrowserActionError(
          `browser ${args.action}: the connection to the browser was lost during the action, so whether it took effect is unknown; take a snapshot to see the page`,
        );
      live = await this.openBrowser(settings, this.row());
      outcome = await attempt();
    }
    const note = this.replacedNote(live);
    if (outcome.current !== undefined)
      this.ctx.storage.sql.exec(
        `UPDATE browser_session SET current_tab = ? WHERE id = 1`,
        outcome.current,
      );
    return {
      text: note + outcome.text,
      ...(outcome.image ? { image: outcome.image } : {}),
      browserMs: 0,
    };
  }

  private replacedNote(live: LiveBrowser): string {
    return live.replaced ? "(the earlier browser session had ended, so its tabs are gone)\n" : "";
  }

  private async openBrowser(
    settings: BrowserSettings,
    row: SessionRow | undefined,
  ): Promise<LiveBrowser> {
    if (this.live?.connected) return this.live;
    this.live = undefined;
    const live = await LiveBrowser.open(this.env, settings, row?.session_id ?? undefined);
    const now = Date.now();
    if (live.sessionId !== row?.session_id) {
      // A new hosted browser: time so far of the old one was charged; this one starts now.
      this.charge(now);
      this.ctx.storage.sql.exec(
        `INSERT OR REPLACE INTO browser_session(id, session_id, current_tab, opened_at, charged_at, last_used_at)
         VALUES (1, ?, NULL, ?, ?, ?)`,
        live.sessionId,
        now,
        now,
        now,
      );
    }
    this.live = live;
    return live;
  }

  /** Charges the open browser's time since the last charge to the day; returns what was charged. */
  private charge(now: number): number {
    const row = this.row();
    if (!row?.session_id || row.charged_at === null) return 0;
    const ms = Math.max(0, now - row.charged_at);
    this.ctx.storage.sql.exec(
      `INSERT INTO browser_days(day, ms) VALUES (?, ?) ON CONFLICT(day) DO UPDATE SET ms = ms + excluded.ms`,
      dayOf(now),
      ms,
    );
    this.ctx.storage.sql.exec(`UPDATE browser_session SET charged_at = ? WHERE id = 1`, now);
    this.ctx.storage.sql.exec(
      `INSERT INTO browser_unreported(id, ms) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET ms = ms + excluded.ms`,
      ms,
    );
    return ms;
  }

  /** The time charged since the last reply (this call's, and a close's in between), now reported. */
  private takeUnreported(): number {
    const ms =
      this.ctx.storage.sql
        .exec<{ ms: number }>(`SELECT ms FROM browser_unreported WHERE id = 1`)
        .toArray()[0]?.ms ?? 0;
    this.ctx.storage.sql.exec(`DELETE FROM browser_unreported`);
    return ms;
  }

  private usedToday(now: number): number {
    const spent =
      this.ctx.storage.sql
        .exec<{ ms: number }>(`SELECT ms FROM browser_days WHERE day = ?`, dayOf(now))
        .toArray()[0]?.ms ?? 0;
    const row = this.row();
    return spent + (row?.session_id && row.charged_at !== null ? now - row.charged_at : 0);
  }

  private touch(now: number, settings: BrowserSettings): void {
    if (!this.row()?.session_id) return;
    this.ctx.storage.sql.exec(`UPDATE browser_session SET last_used_at = ? WHERE id = 1`, now);
    // The hosted browser outlives a quiet connection only by keep_alive; the cleanup needs no later alarm than that.
    const idle = settings.tabCleanup ? settings.idleMs : settings.keepAliveMs;
    void this.ctx.storage.put("idleMs", idle);
    void this.ctx.storage.setAlarm(now + idle);
  }

  override async alarm(): Promise<void> {
    const row = this.row();
    if (!row?.session_id) return;
    const idle = (await this.ctx.storage.get<number>("idleMs")) ?? 600_000;
    const due = (row.last_used_at ?? 0) + idle;
    if (Date.now() < due) {
      await this.ctx.storage.setAlarm(due);
      return;
    }
    await this.end();
  }

  /** Closes the tabs and ends the hosted browser (reconnecting for it if need be); charges its time. */
  private async end(): Promise<void> {
    const row = this.row();
    if (this.live?.connected) await this.live.end();
    else if (row?.session_id) await endHostedSession(this.env, row.session_id);
    this.live = undefined;
    this.charge(Date.now());
    this.ctx.storage.sql.exec(
      `UPDATE browser_session SET session_id = NULL, current_tab = NULL, charged_at = NULL WHERE id = 1`,
    );
    await this.ctx.storage.deleteAlarm();
  }

  private statusText(row: SessionRow | undefined, settings: BrowserSettings): string {
    const now = Date.now();
    const running = Boolean(row?.session_id);
    return [
      `browser: ${running ? "running" : "not running"}${running ? ` (session ${row!.session_id}, open since ${new Date(row!.opened_at ?? now).toISOString()})` : ""}`,
      `tabs: ${this.live?.pages().length ?? (running ? "unknown until the next call reconnects" : 0)}; current: ${row?.current_tab ?? "none"}`,
      `browser time today: ${Math.round(this.usedToday(now) / 1000)} s${settings.maxMsPerDay ? ` of ${settings.maxMsPerDay / 1000} s` : ""}`,
    ].join("\n");
  }
}

/** Whether the connection is still up once its close event, if one is on its way, has landed. */
async function stillConnected(live: LiveBrowser, waitMs = 5000): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (live.connected && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return live.connected;
}
