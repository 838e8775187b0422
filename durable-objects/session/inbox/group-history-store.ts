/**
 * The `group_history` table's one owner: un-mentioned group messages kept as context for the next
 * triggered run. Bound: at most the conversation's historyLimit rows (push trims), emptied by take.
 */
export class GroupHistoryStore {
  constructor(private readonly sql: SqlStorage) {}

  push(sender: string, text: string, at: number, limit: number): void {
    if (limit <= 0) return;
    this.sql.exec(`INSERT INTO group_history(sender, text, at) VALUES(?, ?, ?)`, sender, text, at);
    this.sql.exec(
      `DELETE FROM group_history WHERE seq NOT IN (SELECT seq FROM group_history ORDER BY seq DESC LIMIT ?)`,
      limit,
    );
  }
  take(): Array<{ sender: string; text: string; at: number }> {
    const rows = this.sql
      .exec<{ sender: string; text: string; at: number }>(
        `SELECT sender, text, at FROM group_history ORDER BY seq`,
      )
      .toArray();
    this.sql.exec(`DELETE FROM group_history`);
    return rows;
  }
}
