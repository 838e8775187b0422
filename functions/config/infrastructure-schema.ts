import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";
import { isOperatorChannel } from "../core/operator-channels.ts";

/**
 * The keys for the infrastructure around the agent: edgeclaw's own (no OpenClaw counterpart) for
 * the companion's signed ingress and the Worker's use of Postgres, and the Worker's HTTP endpoints
 * (`gateway.http.endpoints`, OpenClaw's keys). Part of configSchema (schema.ts).
 */

/** A channel an ingress key may speak for; the operator's own channels never qualify. */
const companionChannelId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, {
    message: 'expected a channel id in lower case, e.g. "discord"',
  })
  .refine((channel) => !isOperatorChannel(channel), {
    message:
      "webchat and openai are the operator's own channels (gateway token); no ingress key may speak for them",
  });

/**
 * edgeclaw's own: the companion run as a Cloudflare Container, one instance per companion deployment
 * that serves a socket account. Read by `npm run deploy` (image, instance type) and by the
 * deployment's Durable Object that keeps the container running (restart backoff, crash-loop breaker).
 */
const companionContainerSchema = z
  .object({
    /** false: the companion runs elsewhere (any Docker host); the deploy adds no container and nothing starts one. */
    enabled: z.boolean().default(true),
    /** A Dockerfile path (deploy builds and pushes it: needs a Docker engine) or an image already in a registry (no Docker needed). */
    image: z.string().min(1).default("./companion/Dockerfile"),
    instanceType: z
      .enum(["lite", "basic", "standard-1", "standard-2", "standard-3", "standard-4"])
      .default("lite"),
    /** The Worker's public URL the container posts to (EDGECLAW_WORKER_URL); unset = the container is not started. */
    workerUrl: z.url().optional(),
    /** Restart delay after the container stops while wanted; doubles with every earlier unclean stop still in the window, up to the max. */
    restartMinMs: z.number().int().min(1_000).default(5_000),
    restartMaxMs: z.number().int().min(1_000).default(300_000),
    /** Crash-loop breaker: this many unclean stops (exit code ≠ 0) within the window stop the restarts until a deploy or reset. */
    crashLoopStops: z.number().int().min(1).default(3),
    crashLoopWindowMs: z.number().int().min(10_000).default(300_000),
  })
  .prefault({});

/** edgeclaw's own: the signed internal ingress the companion container posts events to. */
export const companionSchema = z
  .object({
    /**
     * Live verification keys (two during a rotation), each with the channels it may speak for. The
     * fallback key (no `ingressKeys` in the file) speaks for none: every event it signs is refused
     * with 403 until the file lists the channels, so a leaked secret never grants a channel by default.
     */
    ingressKeys: z
      .array(
        z.object({
          id: z.string().min(1),
          secret: secretInputSchema,
          channels: z.array(companionChannelId).min(1),
          /** Account ids (e.g. "default", "work") the key may speak for; absent = every account of its channels. */
          accounts: z.array(z.string().min(1)).min(1).optional(),
          /**
           * The companion deployment this key belongs to: its lease, epoch, connector state and status
           * (durable-objects/companion.ts). Absent = the key id. Give the old and the new key of a
           * rotation the same name, so a companion on the new key waits for the one on the old key.
           */
          deployment: z
            .string()
            .regex(/^[\w.-]{1,64}$/)
            .optional(),
        }),
      )
      .default([
        {
          id: "k1",
          secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
          channels: [],
        },
      ]),
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    /** Events in one `POST /internal/companion/events`; a larger batch is 413 (the companion sends at most this many). */
    maxEventsPerRequest: z.number().int().positive().max(1000).default(100),
    /** How long a companion's lease lasts without renewal (it renews every third of this); then another instance may take over. */
    leaseTtlMs: z.number().int().min(3_000).max(600_000).default(30_000),
    /** Bytes one connector state value may hold (cursor, resume token, session id). */
    maxStateValueBytes: z
      .number()
      .int()
      .positive()
      .max(2 * 1024 * 1024)
      .default(64 * 1024),
    /** Where the Worker reaches the companion's `POST /v1/outbound` (session-bound sends); unset = no outbound through the companion. */
    url: z.url().optional(),
    /** Keys the Worker signs `/v1/outbound` with (the other direction's secret); the first signs, all are accepted by the companion during a rotation. */
    outboundKeys: z
      .array(z.object({ id: z.string().min(1), secret: secretInputSchema }))
      .min(1)
      .default([{ id: "k1", secret: { source: "env", id: "EDGECLAW_COMPANION_OUTBOUND_SECRET" } }]),
    /** One outbound command's wait for the companion's answer. */
    outboundTimeoutMs: z.number().int().positive().max(120_000).default(15_000),
    /** The companion as a Cloudflare Container (`npm run deploy` adds it while socket accounts are configured). */
    container: companionContainerSchema,
  })
  .prefault({});

/**
 * edgeclaw's own: how the Worker and its Durable Objects use Postgres. The bound is per isolate (all
 * Durable Objects in it share it); keep it × isolates under the server's connection limit.
 */
export const databaseSchema = z
  .object({
    /** Connections one isolate holds open at once; more database work waits for a free one. */
    maxConnections: z.number().int().positive().default(10),
    connectTimeoutMs: z.number().int().positive().default(10_000),
    queryTimeoutMs: z.number().int().positive().default(30_000),
    /** A Durable Object's pass closes its shared connection after this long unused (a model call holds none). */
    idleCloseMs: z.number().int().nonnegative().default(1_000),
    /** Longest wait between connection attempts while Postgres is unreachable. */
    outageBackoffMaxMs: z.number().int().positive().default(30_000),
  })
  .prefault({});

/**
 * `gateway.http.endpoints`: the OpenAI-compatible endpoints the Worker serves under /v1
 * (workers/openai.ts), each switched and bounded on its own.
 */
/** The largest request body an OpenAI-compatible endpoint reads. */
const endpointBodyBytesSchema = z
  .number()
  .int()
  .positive()
  .default(20 * 1024 * 1024);

/** Images an OpenAI-compatible endpoint takes inline (data: URLs; URLs are never fetched). */
const endpointImagesSchema = z
  .object({
    allowedMimes: z
      .array(z.string())
      .default(["image/jpeg", "image/png", "image/gif", "image/webp"]),
    maxBytes: z
      .number()
      .int()
      .positive()
      .default(10 * 1024 * 1024),
  })
  .loose()
  .prefault({});

export const httpEndpointsSchema = z
  .object({
    endpoints: z
      .object({
        chatCompletions: z
          .object({
            // OpenClaw ships this off; edgeclaw's web chat is built on it, so it is on here.
            enabled: z.boolean().default(true),
            maxBodyBytes: endpointBodyBytesSchema,
            /** `image_url` parts of the latest user message (data: URLs; URLs are never fetched). */
            images: endpointImagesSchema,
          })
          .prefault({}),
        /** POST /v1/responses (OpenClaw's OpenResponses API); off unless enabled, as in OpenClaw. */
        responses: z
          .object({
            enabled: z.boolean().default(false),
            maxBodyBytes: endpointBodyBytesSchema,
            /** `input_image` parts (data: URLs or base64 sources; URLs are never fetched). */
            images: endpointImagesSchema,
            /**
             * edgeclaw: how long a run that called the caller's function tools waits for their
             * outputs before it ends (each call then gets a result saying none came).
             */
            clientToolTimeoutSeconds: z
              .number()
              .int()
              .positive()
              .max(7 * 24 * 3600)
              .default(3600),
          })
          .loose()
          .prefault({}),
      })
      .prefault({}),
  })
  .prefault({});
