import type { EdgeclawConfig } from "../config/schema.ts";
import type { SecretEnv } from "../config/secret-ref.ts";
import { costUsd } from "./model-cost.ts";
import type { MeterStart, ModelCallMeter } from "./metering.ts";
import { isFakeModelEnabled, resolveModel, type ModelSelection } from "./model-resolve.ts";
import {
  isFailoverWorthy,
  isRetryable,
  MODEL_RETRY_ATTEMPTS,
  retryDelayMs,
} from "./model-retry.ts";
import { ADAPTERS, PDF_READING_APIS } from "./providers/adapters.ts";
import { FAKE_MODEL_REF } from "./providers/fake.ts";
import {
  abortableSleep,
  asModelError,
  defaultSleep,
  logFallback,
  record,
  summarise,
  type ModelAttempt,
} from "./model-attempts.ts";

export { ModelFailoverError, type ModelAttempt } from "./model-attempts.ts";
import type { ResolvedModel } from "./providers/types.ts";
import {
  callLocalAuthStore,
  startRotation,
  type AuthProfileRouting,
  type ProfileRotation,
} from "./auth-profiles/rotation.ts";
import { ModelError, type ModelErrorKind, type ModelRequest, type ModelResult } from "./types.ts";
import {
  IMAGE_STRIPPED_NOTICE,
  isImageRefusal,
  prepareImages,
  requestHasImages,
  type LoadMedia,
} from "./media-request.ts";
import {
  DOCUMENT_STRIPPED_NOTICE,
  isDocumentRefusal,
  prepareDocuments,
  requestHasDocuments,
} from "./document-request.ts";

/**
 * One model turn with retry and failover (concepts/model-failover, concepts/retry):
 *
 * 1. Candidates: the selected primary, then `fallbacks` in order (deduplicated). With no primary,
 *    the demo fake when EDGECLAW_FAKE_MODEL=1, else a `not_configured` error that says what to set.
 * 2. Each candidate gets up to 3 attempts for transient failures (rate_limit, overloaded, server,
 *    timeout, network), with jittered exponential backoff; a Retry-After up to 60 s is honoured, a
 *    longer one moves on at once. auth, billing and an unresolvable model fail over immediately;
 *    bad_request, context_overflow and aborts end the call (no other model would do better).
 *    A provider with auth profiles (`auth.profiles`) is tried profile by profile: a rate limit, auth
 *    or billing error cools that profile down and the same request goes out at once with the next
 *    one (auth-profiles/rotation.ts); when none is left the call falls back to the next model.
 * 3. If every candidate failed only because providers were overloaded, the whole chain is tried
 *    again (≤ 10 times, 2.5 s doubling to 30 s), with one notice after 30 s of waiting.
 *
 * Streamed text: deltas are forwarded live as they arrive. If an attempt fails after it forwarded
 * text, that text cannot be taken back, so:
 *  - with `onStreamReset`, the caller is told to discard what it has shown (`onStreamReset` is
 *    called before the next attempt streams) and retry/failover continue as usual;
 *  - without it, the call stops there and throws: a second answer is never appended to a partial
 *    first one. (OpenClaw likewise only retries a turn before any assistant output started.)
 * The returned `text` is always exactly the text of the attempt that succeeded.
 *
 * METERING AND BUDGETS: this is the one place a request leaves for a provider, and `meter` is
 * required. Before every attempt `meter.admit` reserves its worst case against the budgets in
 * force (and may refuse: BudgetExceededError, kind "budget", which ends the call — no retry, no
 * failover); after it, `meter.settle` records the actual usage and price. Any new kind of model call
 * (memory flush, heartbeat, cron, …) goes through here, so it is metered and capped like a turn.
 * Inside a SessionDO the meter is durable-objects/session/upkeep/metering.ts `sessionMeter`.
 */

export interface CallModelArgs {
  config: EdgeclawConfig;
  env: SecretEnv;
  selection: ModelSelection;
  request: ModelRequest;
  /** Records and budget-checks every attempt (metering.ts). Required: no call goes unmetered. */
  meter: ModelCallMeter;
  /** Overrides the provider's first-byte/idle timeout (default 120 s cloud, 300 s self-hosted). */
  timeoutMs?: number;
  /** Jitter source, [0, 1). */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Attempts per candidate for transient failures (default 3). */
  maxAttempts?: number;
  /** Whole-chain retries when every candidate was overloaded (default 10; pass 0 once a tool has run). */
  overloadChainRetries?: number;
  onStreamReset?: (reset: StreamReset) => void;
  /** Status notices that are not assistant content (the overload wait notice). */
  onNotice?: (text: string) => void;
  /**
   * Where auth-profile cooldowns are kept and the session's sticky profile (the SessionDO hands
   * the gateway's AuthProfileStateDO in); without it they last for this call only.
   */
  authProfiles?: AuthProfileRouting;
  /** Told after every attempt at one provider (metrics, spans): when it ran and how it ended. */
  onAttempt?: (attempt: AttemptReport) => void;
  /**
   * Reads an image's bytes from the media store for the request being built (media-request.ts);
   * without it images are named, never sent as pixels.
   */
  loadMedia?: LoadMedia;
  /** Told how many image bytes one attempt held while it was built and sent (the figure in docs/concepts/media.md). */
  onImages?: (report: { modelRef: string; imageCount: number; heldBytes: number }) => void;
}

export interface AttemptReport {
  modelRef: string;
  providerId: string;
  modelId: string;
  startedAt: number;
  durationMs: number;
  /** "ok", or the error kind. */
  outcome: "ok" | ModelErrorKind;
  usage?: ModelResult["usage"];
}

export interface StreamReset {
  modelRef: string;
  error: ModelError;
}

export interface CallModelResult extends ModelResult {
  /** USD at the answering model's configured price (0 when the config has no `cost`). */
  costUsd: number;
  /** Failed attempts before the answer, oldest first. */
  attempts: ModelAttempt[];
  /** Present when a fallback answered instead of the selected primary. */
  fallback?: { selected: string; reason: ModelErrorKind };
  /** The auth profile whose key answered, when the provider has profiles. */
  authProfile?: string;
}

export const NO_MODEL_CONFIGURED_MESSAGE =
  "No model configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY (any picks a current default model), or agents.defaults.model.primary, or EDGECLAW_FAKE_MODEL=1 for a demo";

export const OVERLOAD_WAIT_NOTICE =
  "The AI service is temporarily overloaded. I'm still retrying; this may take a few minutes.";
const OVERLOAD_CHAIN_RETRIES = 10;
const OVERLOAD_CHAIN_BASE_DELAY_MS = 2_500;
const OVERLOAD_CHAIN_MAX_DELAY_MS = 30_000;
const OVERLOAD_NOTICE_AFTER_MS = 30_000;

export async function callModel(callArgs: CallModelArgs): Promise<CallModelResult> {
  // Cooldowns outlive the call only through the caller's store; the local one still rotates within it.
  const args = {
    ...callArgs,
    authProfiles: callArgs.authProfiles ?? { store: callLocalAuthStore() },
  };
  const candidates = candidateRefs(args);
  const attempts: ModelAttempt[] = [];
  const chainRetries = args.overloadChainRetries ?? OVERLOAD_CHAIN_RETRIES;
  const sleep = abortableSleep(args.sleep ?? defaultSleep, args.request.signal);
  let waitedMs = 0;
  let noticeSent = false;
  for (let round = 0; ; round++) {
    const outcome = await walkChain(args, candidates, attempts);
    if (outcome.result) return outcome.result;
    const roundAttempts = attempts.slice(outcome.firstAttemptIndex);
    const onlyOverloaded =
      roundAttempts.length > 0 && roundAttempts.every((attempt) => attempt.kind === "overloaded");
    if (!outcome.exhausted || !onlyOverloaded || outcome.streamed || round >= chainRetries)
      throw outcome.error;
    const delay = Math.min(OVERLOAD_CHAIN_MAX_DELAY_MS, OVERLOAD_CHAIN_BASE_DELAY_MS * 2 ** round);
    await sleep(delay);
    waitedMs += delay;
    if (!noticeSent && waitedMs >= OVERLOAD_NOTICE_AFTER_MS) {
      noticeSent = true;
      args.onNotice?.(OVERLOAD_WAIT_NOTICE);
    }
  }
}

function candidateRefs(args: CallModelArgs): string[] {
  const primary = args.selection.primary?.trim();
  if (!primary) {
    if (isFakeModelEnabled(args.env)) return [FAKE_MODEL_REF];
    throw new ModelError("not_configured", NO_MODEL_CONFIGURED_MESSAGE);
  }
  return [
    ...new Set([primary, ...args.selection.fallbacks.map((ref) => ref.trim()).filter(Boolean)]),
  ];
}

interface ChainOutcome {
  result?: CallModelResult;
  error: ModelError;
  /** Every candidate was tried and failed with a failover-worthy error. */
  exhausted: boolean;
  /** Text reached the caller in this round (whole-chain retries are then off). */
  streamed: boolean;
  firstAttemptIndex: number;
}

async function walkChain(
  args: CallModelArgs & { authProfiles: AuthProfileRouting },
  candidates: string[],
  attempts: ModelAttempt[],
): Promise<ChainOutcome> {
  const firstAttemptIndex = attempts.length;
  const { request } = args;
  const sleep = abortableSleep(args.sleep ?? defaultSleep, request.signal);
  const random = args.random ?? Math.random;
  const maxAttempts = Math.max(1, args.maxAttempts ?? MODEL_RETRY_ATTEMPTS);
  const selected = candidates[0]!;
  let lastError = new ModelError("not_configured", NO_MODEL_CONFIGURED_MESSAGE);
  let streamed = false;

  for (const [index, ref] of candidates.entries()) {
    let model: ResolvedModel;
    let rotation: ProfileRotation | undefined;
    try {
      model = resolveModel(args.config, args.env, ref);
      if (args.timeoutMs !== undefined) model = { ...model, idleTimeoutMs: args.timeoutMs };
      rotation = await startRotation(args.config, args.env, model, args.authProfiles);
      if (rotation) model = rotation.model();
    } catch (error) {
      lastError = asModelError(error);
      attempts.push(record(ref, 1, lastError));
      if (!isFailoverWorthy(lastError.kind)) return fail(lastError);
      logFallback(ref, candidates[index + 1], lastError);
      continue;
    }

    let stripped = false;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (request.signal?.aborted)
        return fail(new ModelError("aborted", "the model call was aborted"));
      const progress = { emitted: false };
      const onTextDelta = request.onTextDelta;
      const prepared = await prepareImages(request.messages, {
        acceptsImages: model.acceptsImages,
        refused: stripped,
        modelRef: model.ref,
        load: args.loadMedia,
      });
      if (prepared.imageCount) args.onImages?.({ modelRef: model.ref, ...prepared });
      const pdfs = await prepareDocuments(prepared.messages, {
        readsPdf: PDF_READING_APIS.has(model.api),
        refused: stripped,
        load: args.loadMedia,
      });
      const attemptRequest: ModelRequest = {
        ...request,
        messages: pdfs.messages,
        onTextDelta: onTextDelta
          ? (text) => {
              progress.emitted = true;
              onTextDelta(text);
            }
          : undefined,
      };
      const start: MeterStart = { model, request: attemptRequest };
      // Outside the try: a budget refusal ends the whole call before the provider sees anything.
      const ticket = await args.meter.admit(start);
      const startedAt = Date.now();
      const report = (outcome: AttemptReport["outcome"], usage?: ModelResult["usage"]) =>
        args.onAttempt?.({
          modelRef: model.ref,
          providerId: model.providerId,
          modelId: model.modelId,
          startedAt,
          durationMs: Date.now() - startedAt,
          outcome,
          ...(usage ? { usage } : {}),
        });
      try {
        const answer = await ADAPTERS[model.api](model, attemptRequest).catch(
          async (error: unknown) => {
            await args.meter.settle(ticket, start, { ok: false, error: asModelError(error) });
            throw error;
          },
        );
        report("ok", answer.usage);
        await rotation?.succeeded();
        // No price: the meter let it through only with no USD cap or allowUnpricedModels; $0 here.
        const price = model.cost ? costUsd(answer.usage, model.cost) : 0;
        await args.meter.settle(ticket, start, { ok: true, usage: answer.usage, costUsd: price });
        return {
          result: {
            ...answer,
            modelRef: model.ref,
            costUsd: price,
            attempts,
            ...(rotation ? { authProfile: rotation.profileId } : {}),
            ...(ref !== selected
              ? { fallback: { selected, reason: attempts.at(-1)?.kind ?? "server" } }
              : {}),
          },
          error: lastError,
          exhausted: false,
          streamed,
          firstAttemptIndex,
        };
      } catch (error) {
        lastError = asModelError(error);
        report(lastError.kind);
        attempts.push(record(model.ref, attempt, lastError));
        if (lastError.kind === "aborted") return fail(lastError);
        // A 400 about an image or a PDF: once, the same model again without them, and the user
        // is told. (A session never wedges on media the provider will not take.)
        const withImages = requestHasImages(attemptRequest.messages);
        const withPdfs = requestHasDocuments(attemptRequest.messages);
        if (
          lastError.kind === "bad_request" &&
          !stripped &&
          !progress.emitted &&
          ((withImages && isImageRefusal(lastError.message)) ||
            (withPdfs && isDocumentRefusal(lastError.message)))
        ) {
          stripped = true;
          args.onNotice?.(withImages ? IMAGE_STRIPPED_NOTICE : DOCUMENT_STRIPPED_NOTICE);
          attempt--;
          continue;
        }
        if (progress.emitted) {
          streamed = true;
          if (!args.onStreamReset) return fail(lastError);
          args.onStreamReset({ modelRef: model.ref, error: lastError });
        }
        if (!isFailoverWorthy(lastError.kind)) return fail(lastError);
        // The key's own failure: the next profile at once, or (none left) the next model.
        const step = rotation ? await rotation.failed(lastError) : "not_a_profile_failure";
        if (step === "rotated") {
          model = rotation!.model();
          attempt--;
          continue;
        }
        if (step === "exhausted") break;
        if (!isRetryable(lastError.kind) || attempt === maxAttempts) break;
        const delay = retryDelayMs(attempt, lastError.retryAfterMs, random);
        if (delay === undefined) break;
        try {
          await sleep(delay);
        } catch (sleepError) {
          return fail(asModelError(sleepError));
        }
      }
    }
    logFallback(model.ref, candidates[index + 1], lastError);
  }
  return { ...fail(lastError), exhausted: true };

  function fail(error: ModelError): ChainOutcome {
    return {
      error: summarise(error, attempts, candidates.length),
      exhausted: false,
      streamed,
      firstAttemptIndex,
    };
  }
}
