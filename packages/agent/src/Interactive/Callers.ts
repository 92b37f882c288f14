/**
 * Who may call the interactive MCP (`/api/v1/mcp`) and who is acting in a call, believed only from a verified source:
 * - a bearer JWT of one of the `interactive.jwtProviders` (the gateway forwards its caller's own token) whose user
 *   holds the platform's console grant (`use` on `<apiGroup>/console`, SubjectAccessReview): the gate the gateway
 *   applies to its own `/mcp`, so going around the gateway gains nothing; or
 * - a ServiceAccount token (TokenReview) holding `create` on `services/kubemend-agent` (SubjectAccessReview, the
 *   `agent-client` role, the same rule as the REST API's writers); the gateway's own ServiceAccount (one of
 *   `delegates`) names the user it authenticated in `X-Kubemend-User` / `X-Kubemend-Groups` or in the tools'
 *   `acting_user` arguments.
 * Anyone else is refused: no or an unverifiable token 401, a user or ServiceAccount without the grant 403 (`AccessRefused`,
 * audited by the route). An identity header or argument from a verified caller that may not delegate is ignored and
 * audited (`agent.identity.ignored`).
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { Audit } from "@kubemend/core/Audit"
import { Auth } from "@kubemend/core/Auth"
import { AccessRefused, AccessRule, makeEndpointAccess } from "@kubemend/core/EndpointAccess"
import { Forbidden, Unauthenticated } from "@kubemend/core/Errors"
import { K8s } from "@kubemend/core/K8s"
import { Sar } from "@kubemend/core/Sar"
import { agentServiceName, identityIgnored } from "../Http/Auth.ts"

export const McpPath = "/api/v1/mcp"
export const UserHeader = "x-kubemend-user"
export const GroupsHeader = "x-kubemend-groups"

export interface Caller {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  readonly via: "jwt" | "gateway"
}

/** What one admitted request may claim about its acting user. */
export interface Acting {
  readonly caller: Option.Option<Caller>
  /** The gateway's ServiceAccount: its `acting_user` arguments are believed. */
  readonly delegate: boolean
  /** Records (audits) an identity claim that was ignored: `what` is the header or argument. */
  readonly ignored: (what: string, claimed: string) => Effect.Effect<void>
}

export interface CallersService {
  /** The acting identity of an admitted request; a caller without a verified identity (or the grant) is refused. */
  readonly resolve: (headers: Readonly<Record<string, string | undefined>>, clientIp?: string) => Effect.Effect<Acting, AccessRefused>
}

const controlChars = /[\u0000-\u001f\u007f-\u009f]/
const maxNameLength = 256

const fromHeaders = (headers: Readonly<Record<string, string | undefined>>): Effect.Effect<Option.Option<Omit<Caller, "via">>, Unauthenticated> => {
  const user = headers[UserHeader]?.trim()
  if (user === undefined || user === "") return Effect.succeed(Option.none())
  const groups = (headers[GroupsHeader] ?? "").split(",").map((g) => g.trim()).filter((g) => g !== "")
  if ([user, ...groups].some((s) => controlChars.test(s) || s.length > maxNameLength)) {
    return Effect.fail(new Unauthenticated({ reason: "control_chars", detail: "identity headers contain control characters or are too long" }))
  }
  return Effect.succeed(Option.some({ user, groups }))
}

/** Reasons of `Auth.authenticate` meaning "not a token of a configured issuer", so TokenReview may know it. */
const notOurJwt = new Set(["unknown_issuer", "malformed_token", "unsupported_algorithm"])

/** The MCP route's rule, for every method it answers: the REST API's writers' permission. */
const mcpRules = new Map(["POST", "GET", "DELETE"].map((m) => [`${m} ${McpPath}`, AccessRule.write]))

export const makeCallers = (delegates: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const auth = yield* Auth
    const audit = yield* Audit
    const sar = yield* Sar
    const k8s = yield* K8s
    const access = yield* makeEndpointAccess(mcpRules, {
      serviceName: agentServiceName,
      apiGroup: k8s.apiGroup,
      tokenCacheTTL: Duration.minutes(1)
    })

    const ignoredBy = (who: string, headers: Readonly<Record<string, string | undefined>>, clientIp: string | undefined) => (what: string, claimed: string) =>
      Effect.flatMap(identityIgnored({ who, what, claimed, resource: McpPath, clientIp }, headers), audit.emit)

    const resolve = Effect.fn("Callers.resolve")(function* (headers: Readonly<Record<string, string | undefined>>, clientIp?: string) {
      const authorization = headers["authorization"]
      const jwt = yield* Effect.either(auth.authenticate(authorization))
      if (jwt._tag === "Left" && !notOurJwt.has(jwt.left.reason)) return yield* new AccessRefused({ error: jwt.left, user: undefined })
      const who = jwt._tag === "Right" ? Option.some(jwt.right) : yield* access.check("POST", McpPath, authorization)
      const user = Option.match(who, { onNone: () => "anonymous", onSome: (p) => p.user })
      const claimed = yield* fromHeaders(headers).pipe(Effect.mapError((error) => new AccessRefused({ error, user })))
      const ignored = ignoredBy(user, headers, clientIp)
      if (jwt._tag === "Right") {
        if (!(yield* sar.check(jwt.right, "console"))) {
          return yield* new AccessRefused({ error: new Forbidden({ detail: `${user} may not use the platform (needs use ${k8s.apiGroup}/console)` }), user })
        }
        if (Option.isSome(claimed) && claimed.value.user !== jwt.right.user) yield* ignored(UserHeader, claimed.value.user)
        return { caller: Option.some<Caller>({ user: jwt.right.user, groups: jwt.right.groups, via: "jwt" }), delegate: false, ignored } satisfies Acting
      }
      if (!delegates.includes(user)) {
        if (Option.isSome(claimed)) yield* ignored(UserHeader, claimed.value.user)
        return { caller: Option.none(), delegate: false, ignored } satisfies Acting
      }
      return { caller: Option.map(claimed, (c): Caller => ({ ...c, via: "gateway" })), delegate: true, ignored } satisfies Acting
    })

    return { resolve } satisfies CallersService
  })

export class Callers extends Context.Tag("@kubemend/agent/Callers")<Callers, CallersService>() {
  /**
   * Delegates default to the platform gateway's ServiceAccount in the agent's namespace. Needs AuthConfig (the
   * `interactive.jwtProviders`), K8s (TokenReview, SubjectAccessReview) and Audit.
   */
  static readonly layer = (delegates?: ReadonlyArray<string>) =>
    Layer.effect(
      Callers,
      Effect.flatMap(K8s, (k8s) => makeCallers(delegates ?? [`system:serviceaccount:${k8s.namespace}:kubemend-gateway`]))
    ).pipe(Layer.provide(Layer.merge(Auth.Default, Sar.Default)))
}
