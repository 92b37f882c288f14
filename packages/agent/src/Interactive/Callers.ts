/**
 * Who is acting in an interactive call. The gateway authenticates people and forwards the identity in
 * `X-Kubemend-User` / `X-Kubemend-Groups` (comma-separated); it is the only caller the network lets in. When the
 * `interactive.jwtProviders` are configured, a bearer JWT from one of those issuers is verified and wins over the
 * headers. With neither, the tools' `acting_user` argument is used (the original's form).
 */
import { Context, Effect, Layer, Option } from "effect"
import { Auth, AuthConfig } from "@kubemend/core/Auth"
import { Unauthenticated } from "@kubemend/core/Errors"

export const UserHeader = "x-kubemend-user"
export const GroupsHeader = "x-kubemend-groups"

export interface Caller {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  readonly via: "jwt" | "header" | "argument"
}

export interface CallersService {
  /** The caller named by the request, if any; a bearer token that fails verification is refused. */
  readonly resolve: (headers: Readonly<Record<string, string | undefined>>) => Effect.Effect<Option.Option<Caller>, Unauthenticated>
}

const controlChars = /[\u0000-\u001f\u007f-\u009f]/
const maxNameLength = 256

const fromHeaders = (headers: Readonly<Record<string, string | undefined>>): Effect.Effect<Option.Option<Caller>, Unauthenticated> => {
  const user = headers[UserHeader]?.trim()
  if (user === undefined || user === "") return Effect.succeed(Option.none())
  const groups = (headers[GroupsHeader] ?? "").split(",").map((g) => g.trim()).filter((g) => g !== "")
  if ([user, ...groups].some((s) => controlChars.test(s) || s.length > maxNameLength)) {
    return Effect.fail(new Unauthenticated({ reason: "control_chars", detail: "identity headers contain control characters or are too long" }))
  }
  return Effect.succeed(Option.some({ user, groups, via: "header" }))
}

export class Callers extends Context.Tag("@kubemend/agent/Callers")<Callers, CallersService>() {
  static readonly layerHeaders = Layer.succeed(Callers, { resolve: fromHeaders })

  /** Bearer JWTs of the configured issuers first, then the gateway headers. */
  static readonly layerJwt = Layer.effect(
    Callers,
    Effect.map(Auth, (auth): CallersService => ({
      resolve: (headers) => {
        const authorization = headers["authorization"]
        if (authorization === undefined) return fromHeaders(headers)
        return auth.authenticate(authorization).pipe(
          Effect.map((p) => Option.some<Caller>({ user: p.user, groups: p.groups, via: "jwt" })),
          Effect.mapError((e) =>
            e._tag === "Unauthenticated" ? e : new Unauthenticated({ reason: "jwks_unavailable", detail: "token could not be verified" }))
        )
      }
    }))
  )

  /** JWT verification when `interactive.jwtProviders` has entries, else headers only. Needs AuthConfig (and K8s). */
  static readonly layerConfig = Layer.unwrapEffect(
    Effect.map(AuthConfig, (config) =>
      config.providers.length === 0 ? Callers.layerHeaders : Callers.layerJwt.pipe(Layer.provide(Auth.Default)))
  )
}
