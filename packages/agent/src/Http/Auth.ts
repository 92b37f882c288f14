/**
 * The REST API's security middleware: each endpoint's rule (declared in core's `AgentApi`) checked by TokenReview
 * + cached SubjectAccessReview (core `EndpointAccess`) — the analysis controller's and the gateway's
 * ServiceAccounts hold `agent-client`. 401/403 are problem+json and `agent.access.denied` audit events.
 */
import { AgentApi, AgentAuth } from "@kubemend/core/AgentApi"
import { Audit } from "@kubemend/core/Audit"
import { Auth, AuthConfig } from "@kubemend/core/Auth"
import { EndpointAccess, guardRequest } from "@kubemend/core/EndpointAccess"
import { K8s } from "@kubemend/core/K8s"
import { Sar } from "@kubemend/core/Sar"
import { Duration, Effect, Layer, Option } from "effect"

/** The agent's own Service name: callers need `get`/`create` on `services/<this>`. */
export const agentServiceName = "kubemend-agent"

export const AgentAuthLive = Layer.effect(
  AgentAuth,
  Effect.gen(function* () {
    const access = yield* EndpointAccess
    const audit = yield* Audit
    return {
      serviceAccount: () =>
        guardRequest(access, "agent", audit.emit).pipe(
          Effect.map(Option.match({
            onNone: () => ({ user: "anonymous", groups: [] }),
            onSome: (p) => ({ user: p.user, groups: p.groups })
          }))
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
