/**
 * The state gateway replicas share, so that whichever replica gets a request can serve it: records with a time to
 * live (MCP session records, A2A tasks and conversations), the session slots behind the global and per-user
 * session caps, and the token buckets of the rate limits.
 *
 * Two stores pass one contract (test/SharedStateContract.test.ts): memory, one replica's own (the default, no
 * Valkey configured), and Valkey, shared by every replica that names the same server and `keyPrefix`. The Valkey
 * layer never fails a caller: while Valkey is unreachable it answers from a memory store of its own (per-replica
 * limits, records only this replica wrote), says so through `degraded`, the `af_gateway_shared_state_degraded`
 * gauge and `/readyz` detail, and goes back to Valkey once a ping every `valkey.recoveryInterval` succeeds.
 *
 * Announcements (`announce`/`notices`, Valkey's pub/sub) tell every replica at once that something changed, e.g. that
 * an MCP session ended, so none goes on serving a copy it holds in memory.
 *
 * Expiry is decided with Effect's Clock in both stores (Valkey's own TTLs only collect garbage), so both behave the
 * same under TestClock.
 */
import { Context, Effect, Layer, Option } from "effect"
import { GatewayConfig } from "./GatewayConfig.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"
import { memoryStore } from "./Shared/Memory.ts"
import { resilient } from "./Shared/Resilient.ts"
import type { SharedStateService } from "./Shared/Store.ts"
import { valkeyStore } from "./Shared/Valkey.ts"
import type { ValkeySettings } from "./Shared/ValkeySettings.ts"

export class SharedState extends Context.Tag("@kubemend/gateway/SharedState")<SharedState, SharedStateService>() {
  /** One replica's own memory (no Valkey). */
  static readonly layerMemory = Layer.effect(
    SharedState,
    Effect.map(memoryStore, (store): SharedStateService => ({ ...store, backend: "memory", degraded: Effect.succeedNone }))
  )

  /** Shared through the Valkey server of `settings`, falling back to this replica's memory while it is unreachable. */
  static readonly layerValkey = (settings: ValkeySettings) =>
    Layer.scoped(
      SharedState,
      Effect.gen(function* () {
        const primary = yield* valkeyStore(settings)
        const fallback = yield* memoryStore
        const metrics = yield* GatewayMetrics
        return yield* resilient(primary, fallback, {
          recoveryInterval: settings.recoveryInterval,
          address: primary.address,
          onChange: metrics.sharedStateDegraded
        })
      })
    )

  /** From the gateway config: Valkey when `valkey.host` is set, else memory. */
  static readonly layer = Layer.unwrapEffect(
    Effect.map(GatewayConfig, (c) => Option.match(c.valkey, { onNone: () => SharedState.layerMemory, onSome: SharedState.layerValkey }))
  )
}
