import type { AuthProfileRouting } from "../../../functions/agent/auth-profiles/rotation.ts";
import {
  hasAuthProfiles,
  providerAuthProfiles,
} from "../../../functions/agent/auth-profiles/profiles.ts";
import { providerProfilesView } from "../../../functions/agent/auth-profiles/view.ts";
import { parseModelRef } from "../../../functions/agent/model-resolve.ts";
import type {
  AuthProfilesStatus,
  SessionStatus,
} from "../../../functions/commands/session-control.ts";
import type { Env } from "../../env.ts";
import { currentSessionId } from "../lifecycle.ts";
import { settings } from "../settings.ts";
import type { SessionState } from "../state.ts";

/** Providers a session remembers a sticky profile for (a config names a few). */
const MAX_PINNED_PROVIDERS = 16;

/** The gateway's one AuthProfileStateDO (durable-objects/auth-profiles.ts). */
export function authProfileState(env: Env) {
  return env.AUTH_PROFILES.get(env.AUTH_PROFILES.idFromName("global"));
}

/**
 * A session's auth-profile routing for functions/agent/model-call.ts: the gateway-wide cooldowns,
 * and the profile this session last used per provider (`authPins`), which is tried first while it
 * is usable (OpenClaw's session stickiness keeps the provider's prompt cache warm). A pin holds for
 * the session and compaction cycle it was made in: /new, /reset and a compaction let the next call
 * choose afresh, as OpenClaw's auto-pinned profile does.
 */
export function sessionAuthProfiles(s: SessionState): AuthProfileRouting {
  const stub = authProfileState(s.env);
  const cycle = () => ({
    sessionId: currentSessionId(s, Date.now()),
    compactions: Number(s.store.meta.get("compactions") ?? 0),
  });
  const current = () => {
    const pins = s.store.meta.getJson("authPins");
    const now = cycle();
    return pins && pins.sessionId === now.sessionId && pins.compactions === now.compactions
      ? pins
      : { ...now, byProvider: {} };
  };
  return {
    store: {
      read: (ids) => stub.read(ids),
      record: (id, provider, outcome) => stub.record(id, provider, outcome),
    },
    pins: {
      get: (provider) => current().byProvider[provider],
      user: (provider) => userPin(s, provider),
      set: (provider, profileId) => {
        const pins = current();
        if (pins.byProvider[provider] === profileId) return;
        const byProvider = Object.fromEntries(
          [
            ...Object.entries(pins.byProvider).filter(([key]) => key !== provider),
            [provider, profileId],
          ].slice(-MAX_PINNED_PROVIDERS),
        );
        s.store.meta.setJson("authPins", { ...pins, byProvider });
      },
    },
  };
}

/** The profile `/model …@<profile>` pinned, when it is a profile of `provider` (else it waits unused). */
function userPin(s: SessionState, provider: string): string | undefined {
  const id = settings(s).authProfile;
  if (!id) return undefined;
  return providerAuthProfiles(s.config, provider).some((profile) => profile.id === id)
    ? id
    : undefined;
}

/** The profile that last answered this session for `provider` (for /status), if still pinned. */
export function pinnedProfile(s: SessionState, provider: string): string | undefined {
  const pins = s.store.meta.getJson("authPins");
  if (!pins || pins.sessionId !== currentSessionId(s, Date.now())) return undefined;
  return pins.byProvider[provider];
}

/**
 * /status's auth line for the model this session uses: the gateway's cooldowns, read from the
 * state object (a status that cannot reach it says nothing about profiles rather than fail).
 */
export async function authProfilesStatus(
  s: SessionState,
  modelRef: string,
): Promise<AuthProfilesStatus | undefined> {
  const provider = parseModelRef(modelRef)?.providerId;
  if (!provider || !hasAuthProfiles(s.config, provider)) return undefined;
  const ids = providerAuthProfiles(s.config, provider).map((profile) => profile.id);
  const usage = await authProfileState(s.env)
    .read(ids)
    .catch(() => undefined);
  if (!usage) return undefined;
  const view = providerProfilesView(s.config, s.env, provider, usage, Date.now());
  const current = pinnedProfile(s, provider);
  const pinned = userPin(s, provider);
  return {
    provider,
    ...(current ? { current } : {}),
    ...(pinned ? { pinned } : {}),
    profiles: view.profiles.map((profile) => ({
      id: profile.id,
      state: profile.state,
      ...(profile.reason ? { reason: profile.reason } : {}),
      ...(profile.until !== undefined ? { until: profile.until } : {}),
    })),
  };
}

/** The session's status with its auth line (control.ts's /status, the session_status tool). */
export async function statusWithAuthProfiles(
  s: SessionState,
  base: SessionStatus,
): Promise<SessionStatus> {
  const authProfiles = await authProfilesStatus(s, base.model);
  return authProfiles ? { ...base, authProfiles } : base;
}
