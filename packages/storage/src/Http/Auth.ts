/**
 * Storage's security middleware: every endpoint's rule (declared beside it in core's `StorageApi`) checked by
 * TokenReview + cached SubjectAccessReview (core `EndpointAccess`). Writers are the platform's own ServiceAccounts
 * (`create` on `services/kubemend-storage`, the `storage-client` role), readers need `get` on it, export and
 * legal-hold release need the `l3-audit` grant. Missing or rejected token: 401; not granted, or the review
 * failing: 403; TokenReview unreachable: 503. Each 401/403 is written to the audit trail itself
 * (`storage.access.denied`), in the background so a flood of refusals cannot hold requests.
 */
import { Auth, AuthConfig } from "@kubemend/core/Auth"
import { type DenialEvent, EndpointAccess, guardRequest } from "@kubemend/core/EndpointAccess"
import { Sar, SarConfig } from "@kubemend/core/Sar"
import { StorageApi, StorageAuth } from "@kubemend/core/StorageApi"
import { Effect, Layer, Option } from "effect"
import { AuditWriter } from "../AuditWriter.ts"
import { StorageConfig } from "../StorageConfig.ts"

export const StorageAuthLive = Layer.effect(
  StorageAuth,
  Effect.gen(function* () {
    const writer = yield* AuditWriter
    const access = yield* EndpointAccess
    const emit = (event: DenialEvent) =>
      writer.write([event]).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("could not audit a refused request", cause)),
        Effect.forkDaemon,
        Effect.asVoid
      )
    return {
      serviceAccount: () =>
        guardRequest(access, "storage", emit).pipe(
          Effect.map(Option.match({
            onNone: () => ({ username: "anonymous", groups: [] }),
            onSome: (p) => ({ username: p.user, groups: p.groups })
          }))
        )
    }
  })
).pipe(
  Layer.provide(
    Layer.unwrapEffect(
      Effect.map(StorageConfig, (c) => EndpointAccess.layer(StorageApi, { serviceName: c.serviceName, apiGroup: c.apiGroup, tokenCacheTTL: c.tokenCacheTTL }))
    )
  ),
  // `rbac.sarCacheTTL` (30 s): how long an access answer, a refusal too, is reused.
  Layer.provide(Layer.mergeAll(Auth.Default.pipe(Layer.provide(AuthConfig.layer())), Sar.DefaultWithoutDependencies.pipe(Layer.provide(SarConfig.layerRbac))))
)
