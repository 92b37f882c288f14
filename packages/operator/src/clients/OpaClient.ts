/**
 * The operator's side of Open Policy Agent's REST API (the same API the local platform's `devkit/Opa.ts` serves):
 * `PUT /v1/policies/{id}` loads a module, `POST /v1/data/{path}` evaluates a document for an input. A module OPA
 * will not compile is `PolicyRejected` (with OPA's message); a transport failure, a timeout or a 5xx is
 * `PolicyUnavailable`, which callers answer with the safe decision.
 */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Context, Data, type Duration, Effect, Layer, Option } from "effect"
import { PlatformHttpClient } from "@kubemend/core/Tls/Trust"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"

export class PolicyUnavailable extends Data.TaggedError("PolicyUnavailable")<{ readonly detail: string }> {}
export class PolicyRejected extends Data.TaggedError("PolicyRejected")<{ readonly id: string; readonly detail: string }> {}

export interface OpaClientShape {
  readonly putPolicy: (id: string, module: string) => Effect.Effect<void, PolicyRejected | PolicyUnavailable>
  /** The document at `data.<path>` for `input`; None when the policy leaves it undefined. */
  readonly evaluate: (path: ReadonlyArray<string>, input: unknown) => Effect.Effect<Option.Option<unknown>, PolicyUnavailable>
}

const snippet = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…` : s)

export class OpaClient extends Context.Tag("@kubemend/operator/OpaClient")<OpaClient, OpaClientShape>() {
  static readonly make = (baseUrl: string, timeout: Duration.DurationInput) =>
    Effect.gen(function* () {
      const http = yield* HttpClient.HttpClient
      const base = baseUrl.replace(/\/+$/, "")
      const call = (request: HttpClientRequest.HttpClientRequest) =>
        http.execute(request).pipe(
          Effect.flatMap((r: HttpClientResponse.HttpClientResponse) => Effect.map(r.text, (text) => ({ status: r.status, text }))),
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new PolicyUnavailable({ detail: `no answer from ${base} within the deadline` }) }),
          Effect.catchTags({
            RequestError: (e) => Effect.fail(new PolicyUnavailable({ detail: e.message })),
            ResponseError: (e) => Effect.fail(new PolicyUnavailable({ detail: e.message }))
          })
        )
      const messageOf = (text: string) => {
        try {
          const body = JSON.parse(text) as { message?: string; errors?: ReadonlyArray<{ message?: string }> }
          return [body.message, ...(body.errors ?? []).map((e) => e.message)].filter((m) => m !== undefined).join("; ")
        } catch {
          return snippet(text)
        }
      }
      return OpaClient.of({
        putPolicy: (id, module) =>
          call(HttpClientRequest.put(`${base}/v1/policies/${encodeURIComponent(id)}`).pipe(HttpClientRequest.bodyText(module, "text/plain"))).pipe(
            Effect.flatMap(({ status, text }): Effect.Effect<void, PolicyRejected | PolicyUnavailable> =>
              status < 300
                ? Effect.void
                : status === 400
                ? Effect.fail(new PolicyRejected({ id, detail: messageOf(text) }))
                : Effect.fail(new PolicyUnavailable({ detail: `PUT policy ${id}: ${status} ${messageOf(text)}` }))
            ),
            Effect.withSpan("OpaClient.putPolicy")
          ),
        evaluate: (path, input) =>
          call(
            HttpClientRequest.post(`${base}/v1/data/${path.map(encodeURIComponent).join("/")}`).pipe(
              HttpClientRequest.bodyText(JSON.stringify({ input }), "application/json")
            )
          ).pipe(
            Effect.flatMap(({ status, text }): Effect.Effect<Option.Option<unknown>, PolicyUnavailable> => {
              if (status >= 300) return Effect.fail(new PolicyUnavailable({ detail: `data.${path.join(".")}: ${status} ${messageOf(text)}` }))
              try {
                const body = JSON.parse(text) as { result?: unknown }
                return Effect.succeed("result" in body ? Option.some(body.result) : Option.none())
              } catch {
                return Effect.fail(new PolicyUnavailable({ detail: `data.${path.join(".")}: answer is not JSON: ${snippet(text)}` }))
              }
            }),
            Effect.withSpan("OpaClient.evaluate")
          )
      })
    })

  /**
   * The client of `lifecycle.policy.url` (HTTPS in a cluster) on undici, verifying OPA's serving certificate against
   * the platform CA the operator trusts (core `Tls/Trust`).
   */
  static readonly layer = Layer.effect(
    OpaClient,
    Effect.flatMap(LifecycleConfig, (c) => OpaClient.make(c.policy.url, c.policy.requestTimeout))
  ).pipe(Layer.provide(PlatformHttpClient))
}
