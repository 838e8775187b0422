import type { MetaStore, MirrorWatermark } from "../meta.ts";

const NOTHING_COPIED: MirrorWatermark = { transcriptSeq: 0, runStamp: 0, callStamp: 0 };

/**
 * What the Postgres mirror has copied: every transcript row up to `transcriptSeq`, every run and
 * model call whose mirror stamp is at most `runStamp` / `callStamp`.
 *
 * Transcript seqs only grow (schema step 14). Runs and model calls have no such key, so they get a
 * mirror stamp when they become worth copying (a model call when it is recorded, a run when it
 * finishes) from `nextStamp`, which only grows within the object: a row stamped while the mirror
 * awaits Postgres is above everything that pass read, so the watermark it then sets never covers it.
 *
 * A pass writes no row (schema step 20): the watermark is exact in this isolate's memory and
 * stored where rows are written anyway — each run's end carries it (runs.mirror_mark, the value
 * before the run's own rows were copied), and the sweep writes meta `mirrorWatermark` in its
 * transaction before it drops any row. A new isolate starts from the higher of the two, which is
 * never above what Postgres holds, only possibly below it: the rows of the passes since the last
 * run's end are copied again, which the copy's on-conflict-do-nothing makes harmless.
 */
export class MirrorWatermarks {
  /** The exact watermark (undefined until this isolate first reads it). */
  private mark: MirrorWatermark | undefined;
  /** The highest stamp this isolate knows of (undefined until the first stamp is asked for). */
  private last: number | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly meta: MetaStore,
  ) {}

  /** What has been copied so far (nothing, for an object that never mirrored). */
  current(): MirrorWatermark {
    this.mark ??= this.stored();
    return this.mark;
  }

  /**
   * Raises the watermark to what a pass copied (a part left out stays where it was), in memory
   * only; never lowers a part (a batch sent again is copied again).
   */
  advance(copied: Partial<MirrorWatermark>): void {
    const now = this.current();
    this.mark = {
      transcriptSeq: Math.max(now.transcriptSeq, copied.transcriptSeq ?? 0),
      runStamp: Math.max(now.runStamp, copied.runStamp ?? 0),
      callStamp: Math.max(now.callStamp, copied.callStamp ?? 0),
    };
  }

  /** The watermark as a finishing run's row carries it (runs.mirror_mark). */
  carried(): string {
    return JSON.stringify(this.current());
  }

  /**
   * Writes the watermark to meta when it moved since it was last stored there: the sweep does,
   * in its transaction, before it drops rows (so a run deleted takes no carried mark with it).
   */
  persist(): void {
    const now = this.current();
    const kept = this.meta.getJson("mirrorWatermark") ?? NOTHING_COPIED;
    if (
      now.transcriptSeq !== kept.transcriptSeq ||
      now.runStamp !== kept.runStamp ||
      now.callStamp !== kept.callStamp
    )
      this.meta.setJson("mirrorWatermark", now);
  }

  /**
   * The stamp for a row becoming worth copying: the clock, but always above every stamp given
   * before. Once per isolate it starts above every stamp stored and above the watermarks (a scan:
   * a read is 1/1000 of a write), so neither a previous isolate whose clock ran ahead nor rows
   * the sweep already deleted can leave a new row at or under the watermark.
   */
  nextStamp(): number {
    this.last ??= this.highestGiven();
    this.last = Math.max(Date.now(), this.last + 1);
    return this.last;
  }

  /** Each part at its highest of meta's and the newest carried mark (parts only grow). */
  private stored(): MirrorWatermark {
    const kept = this.meta.getJson("mirrorWatermark") ?? NOTHING_COPIED;
    const carried = this.sql
      .exec<{ t: number | null; r: number | null; c: number | null }>(
        `SELECT MAX(json_extract(mirror_mark, '$.transcriptSeq')) AS t,
                MAX(json_extract(mirror_mark, '$.runStamp')) AS r,
                MAX(json_extract(mirror_mark, '$.callStamp')) AS c
           FROM runs WHERE mirror_mark IS NOT NULL`,
      )
      .one();
    return {
      transcriptSeq: Math.max(kept.transcriptSeq, carried.t ?? 0),
      runStamp: Math.max(kept.runStamp, carried.r ?? 0),
      callStamp: Math.max(kept.callStamp, carried.c ?? 0),
    };
  }

  private highestGiven(): number {
    const stored = this.sql
      .exec<{ stamp: number | null }>(
        `SELECT MAX(COALESCE((SELECT MAX(mirror_stamp) FROM runs), 0),
                    COALESCE((SELECT MAX(mirror_stamp) FROM model_calls), 0)) AS stamp`,
      )
      .one().stamp;
    const marks = this.current();
    return Math.max(stored ?? 0, marks.runStamp, marks.callStamp);
  }
}
