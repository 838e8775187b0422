import { callAnthropic } from "./anthropic.ts";
import { callFakeModel } from "./fake.ts";
import { callGemini } from "./google.ts";
import { callOpenAiCompletions } from "./openai.ts";
import { callOpenAiResponses } from "./openai-responses.ts";
import type { ProviderApi, ProviderCall } from "./types.ts";

/** One adapter per wire format (`models.providers.<id>.api`); model-call.ts picks by the resolved api. */
export const ADAPTERS: Record<ProviderApi, ProviderCall> = {
  "anthropic-messages": callAnthropic,
  "openai-completions": callOpenAiCompletions,
  "openai-responses": callOpenAiResponses,
  "google-generative-ai": callGemini,
  fake: callFakeModel,
};

/**
 * The wire formats that take a PDF as the file itself (Anthropic document blocks, Gemini
 * inlineData, Responses input_file); any other model reads the turn's line about the file.
 */
export const PDF_READING_APIS: ReadonlySet<ProviderApi> = new Set([
  "anthropic-messages",
  "google-generative-ai",
  "openai-responses",
]);
