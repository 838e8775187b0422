import type {
  ContextReport,
  SessionControl,
  SessionSettings,
  SessionSettingsPatch,
  SessionStatus,
} from "../../functions/commands/session-control.ts";

/**
 * An in-memory SessionControl: the interface the SessionDO implements, implemented simply, so the
 * commands are tested against the contract itself.
 */
export class MemorySession implements SessionControl {
  settings: SessionSettings = {};
  sessionId = "s1";
  generation = 1;
  runActive = false;
  queued = 0;
  compactions = 0;
  transcript: string[] = ["a", "b", "c"];
  startedAt = 1_000;
  log: string[] = [];
  spend: SessionStatus["spend"] = {
    calls: 3,
    usd: 0.0421,
    inputTokens: 12_345,
    outputTokens: 678,
    cacheReadTokens: 4_000,
    cacheWriteTokens: 120,
    byKind: {
      turn: { calls: 2, usd: 0.04, tokens: 12_000 },
      compaction: { calls: 1, usd: 0.0021, tokens: 5_143 },
    },
    platformUsd: 0.000012,
  };

  async status(): Promise<SessionStatus> {
    return {
      sessionKey: "agent:main:main",
      sessionId: this.sessionId,
      agentId: "main",
      model: this.settings.modelOverride ?? "anthropic/claude-sonnet-4-6",
      modelOverride: this.settings.modelOverride,
      inputTokens: 12_345,
      outputTokens: 678,
      contextTokens: 20_000,
      contextWindow: 200_000,
      queue: { mode: "steer", debounceMs: 500, cap: 20, drop: "summarize", ...this.settings.queue },
      thinkLevel: this.settings.thinkLevel ?? "off",
      thinkSource: this.settings.thinkLevel ? "session" : "model",
      reasoningLevel: this.settings.reasoningLevel ?? "off",
      send: {
        allowed: this.settings.sendPolicy !== "deny",
        source: this.settings.sendPolicy ? "session" : "default",
      },
      verbose: this.settings.verbose ?? "off",
      sessionStartedAt: this.startedAt,
      compactions: this.compactions,
      runActive: this.runActive,
      queuedMessages: this.queued,
      spend: this.spend,
      responseUsage: this.settings.responseUsage ?? "off",
    };
  }
  async newSession(options?: { model?: string }) {
    this.log.push(`new:${options?.model ?? ""}`);
    this.sessionId = `s${++this.generation}`;
    this.transcript = [];
    if (options?.model) this.settings.modelOverride = options.model;
    return { sessionId: this.sessionId };
  }
  async reset(options?: { soft?: boolean }) {
    this.log.push(`reset:${options?.soft ? "soft" : "hard"}`);
    if (!options?.soft) this.transcript = [];
    this.sessionId = `s${++this.generation}`;
    return { sessionId: this.sessionId };
  }
  async stop() {
    const result = { abortedRun: this.runActive, cancelledQueued: this.queued };
    this.runActive = false;
    this.queued = 0;
    return result;
  }
  async approveExec(id: string, decision: string, approver: string) {
    this.log.push(`approve:${id}:${decision}:${approver}`);
    return `approved ${id}`;
  }
  async getSettings() {
    return structuredClone(this.settings);
  }
  async updateSettings(patch: SessionSettingsPatch) {
    for (const [key, value] of Object.entries(patch) as Array<[keyof SessionSettings, unknown]>) {
      if (value === null) delete this.settings[key];
      else if (value !== undefined) (this.settings as Record<string, unknown>)[key] = value;
    }
    return this.getSettings();
  }
  async compact(instructions?: string) {
    if (this.transcript.length === 0)
      return { compacted: false, reason: "the transcript is empty" };
    this.log.push(`compact:${instructions ?? ""}`);
    this.compactions += 1;
    this.transcript = ["summary"];
    return { compacted: true, tokensBefore: 900, tokensAfter: 100 };
  }
  async computeEnv(agentId: string, args: string) {
    this.log.push(`env:${agentId}:${args}`);
    return `envs of ${agentId}`;
  }
  async tools() {
    return [{ name: "read", description: "Read a file." }];
  }
  async exportSession(request: { path?: string }) {
    this.log.push(`export:${request.path ?? ""}`);
    return "exported";
  }
  async context(): Promise<ContextReport> {
    throw new Error("MemorySession has no prompt: /context is tested against the SessionDO");
  }
  async skills() {
    return [];
  }
  async subagents() {
    return [];
  }
  async subagentLog(target: string) {
    return `No sub-agent matches "${target}".`;
  }
  async killSubagent(target: string) {
    return `No sub-agent matches "${target}".`;
  }
}
