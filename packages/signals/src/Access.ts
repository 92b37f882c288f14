/**
 * Who may send signals: a bearer token TokenReview authenticates, then a SubjectAccessReview for `create` on the
 * core `services/<accessResourceName>` in this service's namespace — what the `gateway-signal-source` ClusterRole
 * grants where it is bound. No token or a token
 * TokenReview refuses: 401; not granted, or the review failing: 403 (fail closed). TokenReview itself unreachable:
 * 503, so the sender retries. An allowed token is remembered for `authCacheTTL` (a revoked grant stops within it);
 * refusals and errors are never remembered. A refusal names the caller when TokenReview did, for its audit event.
 */
import { Auth } from "@kubemend/core/Auth"
import { AccessRefused } from "@kubemend/core/EndpointAccess"
import { Forbidden } from "@kubemend/core/Errors"
import { K8s } from "@kubemend/core/K8s"
import { Clock, Duration, Effect } from "effect"
import { createHash } from "node:crypto"
import { SignalsConfig } from "./SignalsConfig.ts"
import { makeSingleFlight } from "./SingleFlight.ts"

export interface Sender {
  readonly user: string
  readonly groups: ReadonlyArray<string>
}

export class Access extends Effect.Service<Access>()("@kubemend/signals/Access", {
  effect: Effect.gen(function* () {
    const auth = yield* Auth
    const k8s = yield* K8s
    const config = yield* SignalsConfig
    const ttl = Duration.toMillis(config.authCacheTTL)
    const allowed = new Map<string, { readonly sender: Sender; readonly until: number }>()
    const reviewing = makeSingleFlight<{ readonly sender: Sender; readonly until: number }, AccessRefused>()

    const review = (sender: Sender) =>
      k8s.subjectAccessReview({
        user: sender.user,
        groups: sender.groups,
        verb: "create",
        group: "",
        resource: "services",
        // The signal Service of this platform, not any namespace's: another platform's grant does not reach here.
        namespace: k8s.namespace,
        name: config.accessResourceName
      }).pipe(
        Effect.timeout(config.k8sRequestTimeout),
        Effect.catchAll((e) => Effect.logWarning("SubjectAccessReview failed; denying", e).pipe(Effect.as(false)))
      )

    const authorize = Effect.fn("Access.authorize")(function* (authorization: string | undefined) {
      const now = yield* Clock.currentTimeMillis
      const key = authorization === undefined ? "" : createHash("sha256").update(authorization).digest("base64")
      const hit = allowed.get(key)
      if (hit !== undefined && hit.until > now) return hit.sender
      const granted = yield* reviewing(
        key,
        Effect.gen(function* () {
          const principal = yield* Effect.mapError(auth.authenticateServiceAccount(authorization), (error) => new AccessRefused({ error, user: undefined }))
          const sender: Sender = { user: principal.user, groups: principal.groups }
          if (!(yield* review(sender))) {
            return yield* new AccessRefused({
              error: new Forbidden({ detail: `${sender.user} may not send signals (needs the gateway-signal-source role)` }),
              user: sender.user
            })
          }
          return { sender, until: Math.min(now + ttl, principal.expiresAt.getTime()) }
        })
      )
      if (allowed.size >= 10_000) allowed.clear()
      allowed.set(key, granted)
      return granted.sender
    })

    return { authorize } as const
  })
}) {}
