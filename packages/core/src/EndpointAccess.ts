/**
 * Who may call which REST endpoint: one rule per endpoint, declared beside it in the HttpApi contract
 * (`.annotate(AccessRule, AccessRule.write)`), checked by TokenReview (who is calling) and a cached
 * SubjectAccessReview (what they may do). Rules name Kubernetes permissions, so the operator grants them with the
 * RBAC it renders and a cluster admin can read who holds them:
 * - `read` / `write`: `get` / `create` on the core `services/<the serving service's name>` in the serving
 *   service's namespace — what the `storage-client` and `agent-client` roles grant the platform's own
 *   ServiceAccounts through RoleBindings in that namespace, so another platform's accounts (same names, other
 *   namespace) are not writers here;
 * - `grant(name)`: `use` on `<apiGroup>/audit` named `name` — a persona grant (the `tool-l3-audit` role holds
 *   `export` and `legal-hold-release`);
 * - `public`: no check (the export verification key).
 * An endpoint without a rule is refused (fail closed), and so is a review that errors or times out.
 */
import { HttpApi, HttpRouter, HttpServerRequest } from "@effect/platform"
import type { HttpApiGroup } from "@effect/platform"
import { Clock, Context, Data, Duration, Effect, FiberRef, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { Auth, type Principal } from "./Auth.ts"
import { type DependencyUnavailable, Forbidden, Unauthenticated } from "./Errors.ts"
import type { ForbiddenProblem, ServiceUnavailableProblem, UnauthorizedProblem } from "./Problem.ts"
import { AccessRule, type AccessRuleShape, grantResource } from "./EndpointAccess/Rule.ts"
import { K8s } from "./K8s.ts"
import { Sar, type SarAttributes } from "./Sar.ts"
import { toProblem } from "./Wire.ts"
import { currentRequestId } from "./ApiHeaders.ts"

export { AccessRule, type AccessRuleShape, auditGrants, grantResource } from "./EndpointAccess/Rule.ts"

export interface EndpointAccessSettings {
  /** The serving service's own Service name (`kubemend-storage`): `read`/`write` are reviewed on it. */
  readonly serviceName: string
  /** The platform's API group (`grant` rules). */
  readonly apiGroup: string
  /** How long a TokenReview answer is reused (the SAR cache has its own TTL). */
  readonly tokenCacheTTL: Duration.Duration
}

/** `METHOD template` → rule, for every endpoint of `api` that declares one (group annotations count). */
export const rulesOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): ReadonlyMap<string, AccessRuleShape> => {
  const rules = new Map<string, AccessRuleShape>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const rule = Context.getOption(mergedAnnotations, AccessRule)
      if (Option.isSome(rule)) rules.set(`${endpoint.method} ${endpoint.path}`, rule.value)
    }
  })
  return rules
}

/** Endpoints of `api` with no rule (a test asserts there are none). */
export const unruledEndpoints = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): ReadonlyArray<string> => {
  const rules = rulesOf(api)
  const missing: Array<string> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const key = `${endpoint.method} ${endpoint.path}`
      if (!rules.has(key)) missing.push(key)
    }
  })
  return missing
}

export const attributesOf = (rule: Exclude<AccessRuleShape, { _tag: "Public" }>, s: EndpointAccessSettings & { readonly namespace?: string }): SarAttributes =>
  rule._tag === "Service"
    ? { verb: rule.verb, group: "", resource: "services", ...(s.namespace === undefined ? {} : { namespace: s.namespace }), name: s.serviceName }
    : { verb: "use", group: s.apiGroup, resource: grantResource, name: rule.name }

const describe = (rule: AccessRuleShape, s: EndpointAccessSettings & { readonly namespace?: string }) =>
  rule._tag === "Public" ?
    "public" :
    (({ verb, group, resource, namespace, name }) =>
      `${verb} ${group === "" ? "" : `${group}/`}${resource}/${name}${namespace === undefined ? "" : ` in namespace ${namespace}`}`)(attributesOf(rule, s))

const maxCached = 10_000

/** A refused request: why (the domain error the wire table maps), and who, when the token said. */
export class AccessRefused extends Data.TaggedError("AccessRefused")<{
  readonly error: Unauthenticated | Forbidden | DependencyUnavailable
  readonly user: string | undefined
}> {}

/**
 * Checks a request against the rule of its route. A missing or unverifiable token is `Unauthenticated` (401), a
 * caller without the permission `Forbidden` (403), TokenReview unreachable `DependencyUnavailable` (503).
 */
export const makeEndpointAccess = (rules: ReadonlyMap<string, AccessRuleShape>, serviceSettings: EndpointAccessSettings) =>
  Effect.gen(function* () {
    const auth = yield* Auth
    const sar = yield* Sar
    // The serving service's Service lives in the namespace the service runs in.
    const settings = { ...serviceSettings, namespace: (yield* K8s).namespace }
    const ttl = Duration.toMillis(settings.tokenCacheTTL)
    const reviewed = new Map<string, { readonly principal: Principal; readonly until: number }>()

    // Accepted tokens only: a token registered a moment after a refusal works at once.
    const authenticate = (authorization: string | undefined) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const key = createHash("sha256").update(authorization ?? "").digest("base64")
        const hit = reviewed.get(key)
        if (hit !== undefined && hit.until > now) return hit.principal
        reviewed.delete(key)
        const principal = yield* auth.authenticateServiceAccount(authorization)
        if (reviewed.size >= maxCached) reviewed.delete(reviewed.keys().next().value!)
        reviewed.set(key, { principal, until: Math.min(now + ttl, principal.expiresAt.getTime()) })
        return principal
      })

    const check = Effect.fn("EndpointAccess.check")(function* (
      method: string,
      template: string,
      authorization: string | undefined
    ): Effect.fn.Return<Option.Option<Principal>, AccessRefused> {
      const rule = rules.get(`${method} ${template}`)
      if (rule?._tag === "Public") return Option.none()
      const principal = yield* Effect.mapError(authenticate(authorization), (error) => new AccessRefused({ error, user: undefined }))
      const refuse = (detail: string) => new AccessRefused({ error: new Forbidden({ detail }), user: principal.user })
      if (rule === undefined) return yield* refuse(`${method} ${template} declares no access rule; refused`)
      if (!(yield* sar.allows(principal, attributesOf(rule, settings)))) {
        return yield* refuse(`${principal.user} may not ${method} ${template} (needs ${describe(rule, settings)})`)
      }
      return Option.some(principal)
    })

    return { check, describe: (method: string, template: string) => Option.fromNullable(rules.get(`${method} ${template}`)) }
  })

export type EndpointAccessShape = Effect.Effect.Success<ReturnType<typeof makeEndpointAccess>>

/** The checker of one service's API, for its middleware. */
export class EndpointAccess extends Context.Tag("@kubemend/core/EndpointAccess")<EndpointAccess, EndpointAccessShape>() {
  static readonly layer = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
    api: HttpApi.HttpApi<Id, Groups, E, R>,
    settings: EndpointAccessSettings
  ) => Layer.effect(EndpointAccess, makeEndpointAccess(rulesOf(api), settings))
}

export { Forbidden, Unauthenticated }

/** What a refused request was, for its audit event. */
export interface Denial {
  readonly service: string
  readonly method: string
  readonly path: string
  readonly status: 401 | 403
  readonly reason: string
  readonly user: string | undefined
  readonly clientIp: string | undefined
  readonly requestId: string | undefined
}

export type DenialEvent = ReturnType<typeof denialEvent>

/** The `security` audit event of one refused request (`<service>.access.denied`). */
export const denialEvent = (d: Denial, now: Date) => ({
  version: "1.0",
  event_type: `${d.service}.access.denied`,
  event_timestamp: now.toISOString(),
  event_category: "security" as const,
  event_action: "denied",
  event_outcome: "failure" as const,
  correlation_id: d.requestId ?? `access-denied-${d.service}`,
  actor_type: d.user === undefined ? "anonymous" : "service_account",
  actor_id: d.user ?? "anonymous",
  ...(d.clientIp === undefined ? {} : { actor_ip: d.clientIp.slice(0, 45) }),
  resource_type: "endpoint",
  resource_id: `${d.method} ${d.path}`,
  error_code: String(d.status),
  error_message: d.reason.slice(0, 1000),
  event_data: {
    event_type: `${d.service}.access.denied`,
    method: d.method,
    path: d.path,
    status: d.status,
    reason: d.reason,
    ...(d.requestId === undefined ? {} : { request_id: d.requestId })
  }
})

/**
 * Audits one refused request (a 401 or 403; an unreachable TokenReview is the platform's fault, not the caller's)
 * as `<service>.access.denied` through `emit`, which must not block (emitters buffer).
 */
export const auditRefusal = (
  service: string,
  emit: (event: DenialEvent) => Effect.Effect<void>,
  request: HttpServerRequest.HttpServerRequest,
  refused: AccessRefused,
  clientIp: string | undefined = Option.getOrUndefined(request.remoteAddress)
) =>
  refused.error._tag === "DependencyUnavailable"
    ? Effect.void
    : Effect.flatMap(Effect.zip(Clock.currentTimeMillis, FiberRef.get(currentRequestId)), ([now, requestId]) =>
      emit(denialEvent({
        service,
        method: request.method,
        path: request.url.split("?")[0] ?? request.url,
        status: refused.error._tag === "Unauthenticated" ? 401 : 403,
        reason: refused.error._tag === "Unauthenticated" ? `${refused.error.reason}: ${refused.error.detail ?? ""}` : refused.error.detail ?? "forbidden",
        user: refused.user,
        clientIp,
        requestId: Option.getOrUndefined(requestId)
      }, new Date(now))))

/**
 * The body of a service's security middleware: checks the current request against its route's rule, audits every
 * 401/403 (`auditRefusal`), and fails with the RFC 7807 problem.
 */
export const guardRequest = (
  access: EndpointAccessShape,
  service: string,
  emit: (event: DenialEvent) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { route } = yield* HttpRouter.RouteContext
    return yield* access.check(request.method, route.path, request.headers["authorization"]).pipe(
      Effect.tapError((refused) => auditRefusal(service, emit, request, refused)),
      Effect.catchAll((refused) =>
        Effect.flatMap(toProblem(refused.error), (p) => Effect.fail(p as UnauthorizedProblem | ForbiddenProblem | ServiceUnavailableProblem))
      )
    )
  })
