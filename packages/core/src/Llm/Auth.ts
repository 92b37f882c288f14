/**
 * Credentials: the OAuth2 client-credentials token (fetched once, cached until shortly before expiry) and the header
 * forms providers expect.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Clock, Duration, Effect, Option, Redacted, Schema, SynchronizedRef } from "effect"
import type { LlmSettings, Oauth2Settings } from "./Config.ts"
import { LlmBadRequest, type LlmError, LlmUnavailable } from "./Errors.ts"
import type { Auth } from "./Transport.ts"
import type { Target } from "./Target.ts"

/** Refresh this long before the token's stated expiry so an in-flight call never carries a stale token. */
const refreshMargin = Duration.seconds(60)

const TokenAnswer = Schema.Struct({
  access_token: Schema.String,
  expires_in: Schema.optional(Schema.Union(Schema.Number, Schema.NumberFromString))
})

export type TokenSource = Effect.Effect<string, LlmError>

export const makeOauth2 = (client: HttpClient.HttpClient, oauth: Oauth2Settings, timeout: Duration.Duration) =>
  Effect.gen(function* () {
    const cache = yield* SynchronizedRef.make(Option.none<{ token: string; expiresAt: number }>())
    const fetch = Effect.gen(function* () {
      const request = HttpClientRequest.post(oauth.tokenUrl).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.bodyUrlParams({
          grant_type: "client_credentials",
          client_id: oauth.clientId,
          client_secret: Redacted.value(oauth.clientSecret),
          ...(oauth.scopes.length === 0 ? {} : { scope: oauth.scopes.join(" ") })
        })
      )
      const response = yield* client.execute(request).pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new LlmUnavailable({ message: "oauth2 token timeout" }) }),
        Effect.catchTag("RequestError", "ResponseError", (e) => new LlmUnavailable({ message: `oauth2 token: ${e.message}` }))
      )
      const body = yield* Effect.orElseSucceed(response.json, () => null)
      if (response.status >= 500) {
        return yield* new LlmUnavailable({ message: "oauth2 token endpoint failed", status: response.status })
      }
      if (response.status >= 300) {
        return yield* new LlmBadRequest({ message: "oauth2 token request refused", status: response.status })
      }
      const answer = yield* Schema.decodeUnknown(TokenAnswer)(body).pipe(
        Effect.mapError(() => new LlmBadRequest({ message: "oauth2 token answer has no access_token" }))
      )
      const now = yield* Clock.currentTimeMillis
      const lifetime = Duration.seconds(answer.expires_in ?? 300)
      return { token: answer.access_token, expiresAt: now + Duration.toMillis(lifetime) }
    })
    // Concurrent callers wait on the one refresh instead of each fetching a token.
    return SynchronizedRef.modifyEffect(cache, (current) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Option.isSome(current) && now < current.value.expiresAt - Duration.toMillis(refreshMargin)
          ? Effect.succeed([current.value.token, current] as const)
          : Effect.map(fetch, (fresh) =>
            [fresh.token, Option.some(fresh)] as const))) satisfies TokenSource
  })

export interface Credentials {
  readonly settings: LlmSettings
  readonly oauth2: Option.Option<TokenSource>
}

const fixed = (headers: Record<string, string>): Auth => () => Effect.succeed(headers)

/** `Authorization: Bearer` from the OAuth2 token when configured, else from the API key, else nothing. */
export const bearerAuth = (creds: Credentials, target: Target, extra: Record<string, string> = {}): Auth => {
  if (Option.isSome(creds.oauth2)) {
    const token = creds.oauth2.value
    return () => Effect.map(token, (t) => ({ ...extra, authorization: `Bearer ${t}` }))
  }
  return target.apiKey === undefined
    ? fixed(extra)
    : fixed({ ...extra, authorization: `Bearer ${Redacted.value(target.apiKey)}` })
}

/** A provider-specific key header (`api-key`, `x-api-key`) when there is a key, else the OAuth2 bearer token. */
export const keyHeaderAuth = (
  creds: Credentials,
  target: Target,
  header: string,
  extra: Record<string, string> = {}
): Auth =>
  target.apiKey === undefined
    ? bearerAuth(creds, target, extra)
    : fixed({ ...extra, [header]: Redacted.value(target.apiKey) })
