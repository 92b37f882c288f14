/**
 * `/readyz` of the gateway: ready only when the token-signing keys of every configured issuer can be loaded and
 * the cluster API, the agent and storage answer. Shared state (Valkey) being unreachable does not make it unready:
 * `/readyz` says so under `detail.sharedState`. A JWKS success is remembered for a minute so probes do not
 * refetch keys every few seconds. The agent is asked as the gateway itself (its ServiceAccount token, as the event
 * streams are): the agent refuses tokenless callers, and a refusal of the gateway is a misconfiguration (no
 * `agent-client` grant) that leaves interactive investigations broken, so it counts as not ready.
 */
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { AuthConfig } from "@kubemend/core/Auth"
import { K8s } from "@kubemend/core/K8s"
import { Readiness } from "@kubemend/core/Servers"
import { tokenSource } from "@kubemend/core/ServiceToken"
import { GatewayConfig } from "./GatewayConfig.ts"
import { GatewayStorage } from "./GatewayStorage.ts"
import { SharedState } from "./SharedState.ts"

const getJson = (url: string, timeout: Duration.Duration) =>
  Effect.tryPromise(async (signal) => {
    const res = await fetch(url, { signal, headers: { accept: "application/json" } })
    if (!res.ok) throw new Error(`${url} answered ${res.status}`)
    return (await res.json()) as Record<string, unknown>
  }).pipe(Effect.timeout(timeout))

/** Any HTTP answer below 500 but a refusal of `token` (401/403) means the service is up and admits the caller. */
const reachable = (url: string, token: string, timeout: Duration.Duration) =>
  Effect.tryPromise(async (signal) => {
    const res = await fetch(url, { signal, headers: { authorization: `Bearer ${token}` } })
    await res.body?.cancel()
    if (res.status === 401 || res.status === 403) throw new Error(`${url} refused the gateway's ServiceAccount (${res.status})`)
    if (res.status >= 500) throw new Error(`${url} answered ${res.status}`)
  }).pipe(Effect.timeout(timeout))

export const readinessChecks = Layer.effectDiscard(
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const k8s = yield* K8s
    const storage = yield* GatewayStorage
    const config = yield* GatewayConfig
    const auth = yield* AuthConfig
    const shared = yield* SharedState
    const timeout = config.backendTimeout
    const agentToken = yield* tokenSource(config.agentToken)
    let keysLoadedAt = -Infinity

    const jwks = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (now - keysLoadedAt < 60_000) return
      if (auth.providers.length === 0) return yield* Effect.fail("no token issuer configured")
      yield* Effect.forEach(auth.providers, (p) =>
        Effect.gen(function* () {
          const jwksUrl = p.jwksURL ??
            String((yield* getJson(`${p.issuerURL.replace(/\/+$/, "")}/.well-known/openid-configuration`, timeout)).jwks_uri ?? "")
          const doc = yield* getJson(jwksUrl, timeout)
          if (!Array.isArray(doc.keys) || doc.keys.length === 0) return yield* Effect.fail(`no keys at ${jwksUrl}`)
        }), { concurrency: "unbounded", discard: true })
      keysLoadedAt = now
    })

    // Ready either way: without Valkey the replica serves with its own limits, and says so here.
    yield* readiness.detail("sharedState", Effect.map(shared.degraded, Option.map((reason) => `degraded: ${reason}; sessions and rate limits are per replica`)))
    yield* readiness.register("jwks", jwks)
    yield* readiness.register("kubernetes", k8s.listCr("remediationrequests"))
    yield* readiness.register("storage", storage.ping)
    yield* readiness.register(
      "agent",
      Option.match(config.agentUrl, {
        // Without interactive investigations nothing needs the agent.
        onNone: () => (config.interactiveEnabled ? Effect.fail("agent url not configured") : Effect.void),
        onSome: (url) => Effect.flatMap(agentToken, (token) => reachable(`${url.replace(/\/+$/, "")}/api/v1/mcp`, token, timeout))
      })
    )
  })
)
