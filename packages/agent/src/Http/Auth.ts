/**
 * The REST API's security middleware: each endpoint's rule (declared in core's `AgentApi`) checked by TokenReview
 * + cached SubjectAccessReview (core `EndpointAccess`) — the analysis controller's and the gateway's
 * ServiceAccounts hold `agent-client`. 401/403 are problem+json and `agent.access.denied` audit events. The REST
 * API acts for nobody but its caller: identity headers an admitted caller sends are ignored and audited.
 */
import { HttpServerRequest } from "@effect/platform"
import { AgentApi, AgentAuth } from "@kubemend/core/AgentApi"
import { requestIdOf } from "@kubemend/core/ApiHeaders"
import { Audit } from "@kubemend/core/Audit"
import type { AuditEventInput } from "@kubemend/core/StorageApi"
import { Auth, AuthConfig } from "@kubemend/core/Auth"
import { EndpointAccess, guardRequest } from "@kubemend/core/EndpointAccess"
import { K8s } from "@kubemend/core/K8s"
import { Sar } from "@kubemend/core/Sar"
import { Clock, Duration, Effect, Layer, Option } from "effect"

/** The agent's own Service name: callers need `get`/`create` on `services/<this>`. */
export const agentServiceName = "kubemend-agent"

/** Headers by which a caller could claim to act for someone else. */
export const identityHeaders = ["x-kubemend-user", "x-kubemend-groups"] as const

/** The `agent.identity.ignored` security event: `who` claimed `claimed` through `what` (a header or argument). */
export const identityIgnored = (
  d: { readonly who: string; readonly what: string; readonly claimed: string; readonly resource: string; readonly clientIp: string | undefined },
  headers: Readonly<Record<string, string | undefined>>
) =>
  Effect.map(Clock.currentTimeMillis, (now): AuditEventInput => ({
    version: "1.0",
    event_type: "agent.identity.ignored",
    event_timestamp: new Date(now).toISOString(),
    event_category: "security",
    event_action: "ignored",
    event_outcome: "failure",
    correlation_id: requestIdOf(headers) ?? "agent-identity",
    actor_type: "user",
    actor_id: d.who,
    ...(d.clientIp === undefined ? {} : { actor_ip: d.clientIp.slice(0, 45) }),
    resource_type: d.resource === "/api/v1/mcp" ? "mcp" : "endpoint",
    resource_id: d.resource,
    event_data: { event_type: "agent.identity.ignored", claim: d.what, claimed: d.claimed.slice(0, 256), caller: d.who }
  }))

export const AgentAuthLive = Layer.effect(
  AgentAuth,
  Effect.gen(function* () {
    const access = yield* EndpointAccess
    const audit = yield* Audit
    const ignoreClaims = (user: string) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0] ?? request.url
        const clientIp = Option.getOrUndefined(request.remoteAddress)
        for (const what of identityHeaders) {
          const claimed = request.headers[what]
          if (claimed !== undefined) {
            yield* Effect.flatMap(identityIgnored({ who: user, what, claimed, resource: `${request.method} ${path}`, clientIp }, request.headers), audit.emit)
          }
        }
      })
    return {
      serviceAccount: () =>
        guardRequest(access, "agent", audit.emit).pipe(
          Effect.map(Option.match({
            onNone: () => ({ user: "anonymous", groups: [] }),
            onSome: (p) => ({ user: p.user, groups: p.groups })
          })),
          Effect.tap((p) => ignoreClaims(p.user))
        )
    }
  })
).pipe(
  Layer.provide(
    Layer.unwrapEffect(
      Effect.map(K8s, (k8s) => EndpointAccess.layer(AgentApi, { serviceName: agentServiceName, apiGroup: k8s.apiGroup, tokenCacheTTL: Duration.minutes(1) }))
    )
  ),
  Layer.provide(Layer.mergeAll(Auth.Default.pipe(Layer.provide(AuthConfig.layer())), Sar.Default))
)
