import type { MetaStore, MirrorWatermark } from "../meta.ts";

/**
 * What the Postgres mirror has copied, as one meta row (`mirrorWatermark`, schema step 18): every
 * transcript row up to `transcriptSeq`, every run and model call whose mirror stamp is at most
 * `runStamp` / `callStamp`. A pass writes that one row, where it wrote the transcript's watermark
 * plus a `mirrored` flag on each run and model call it copied (a billed row each).
 *
 * Transcript seqs only grow (schema step 14). Runs and model calls have no such key, so they get a
 * mirror stamp when they become worth copying (a model call when it is recorded, a run when it
 * finishes) from `nextStamp`, which only grows within the object: a row stamped while the mirror
 * awaits Postgres is above everything that pass read, so the watermark it then sets never covers it.
 */
export class MirrorWatermarks {
  /** The highest stamp this isolate knows of (undefined until the first stamp is asked for). */
  private last: number | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly meta: MetaStore,
  ) {}

  /** What has been copied so far (nothing, for an object that never mirrored). */
  current(): MirrorWatermark {
    return this.meta.getJson("mirrorWatermark") ?? { transcriptSeq: 0, runStamp: 0, callStamp: 0 };
  }

  /**
   * Raises the watermark to what a pass copied (a part left out stays where it was); writes the
   * one row only when something moved, never lowers a part (a batch sent again is copied again).
   */
  advance(copied: Partial<MirrorWatermark>): void {
    const now = this.current();
    const next: MirrorWatermark = {
      transcriptSeq: Math.max(now.transcriptSeq, copied.transcriptSeq ?? 0),
      runStamp: Math.max(now.runStamp, copied.runStamp ?? 0),
      callStamp: Math.max(now.callStamp, copied.callStamp ?? 0),
    };
    if (
      next.transcriptSeq !== now.transcriptSeq ||
      next.runStamp !== now.runStamp ||
      next.callStamp !== now.callStamp
    )
      this.meta.setJson("mirrorWatermark", next);
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
