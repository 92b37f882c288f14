/**
 * The analysis controller's side of the agent's REST contract (core `AgentApi`): submit an incident, poll the
 * session, fetch the result. Failures a reconcile acts on get names: a 404 on poll or result is `SessionNotFound`
 * (the agent restarted and forgot the session), a 409 on result is `ResultNotReady`; anything else (transport,
 * timeout, 5xx, a body that does not decode) is `DependencyUnavailable`, which the work queue retries with backoff.
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { PlatformHttpClient } from "@kubemend/core/Tls/Trust"
import { AgentApi, type IncidentRequest, type IncidentResponse, type SessionStatus } from "@kubemend/core/AgentApi"
import { DependencyUnavailable, ResultNotReady, SessionNotFound } from "@kubemend/core/Errors"
import { ConflictProblem, NotFoundProblem } from "@kubemend/core/Problem"
import { tokenSource, type TokenSourceOptions } from "@kubemend/core/ServiceToken"
import { Context, type Duration, Effect, Layer, Option } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"

export interface AgentRestClientShape {
  /** `POST /api/v1/incident/analyze`: the new session's id. */
  readonly submit: (request: IncidentRequest) => Effect.Effect<string, DependencyUnavailable>
  /** `GET /api/v1/incident/session/{id}`. */
  readonly status: (sessionId: string) => Effect.Effect<SessionStatus, SessionNotFound | DependencyUnavailable>
  /** `GET /api/v1/incident/session/{id}/result`. */
  readonly result: (
    sessionId: string
  ) => Effect.Effect<IncidentResponse, SessionNotFound | ResultNotReady | DependencyUnavailable>
}

const describe = (e: unknown): string => {
  if (typeof e === "object" && e !== null) {
    const o = e as { message?: unknown; title?: unknown; detail?: unknown; _tag?: unknown }
    const text = [o._tag, o.title, o.detail, o.message].filter((x) => typeof x === "string" && x !== "")
    if (text.length > 0) return text.join(": ")
  }
  return String(e)
}

const unavailable = (e: unknown) => new DependencyUnavailable({ dependency: "agent", detail: describe(e) })

export class AgentRestClient extends Context.Tag("@kubemend/operator/AgentRestClient")<AgentRestClient, AgentRestClientShape>() {
  /**
   * A client of the agent at `baseUrl`; every request has `timeout` as its deadline and carries this controller's
   * ServiceAccount token (the agent reviews it against its `agent-client` rule).
   */
  static readonly make = (baseUrl: string, timeout: Duration.DurationInput, credentials: TokenSourceOptions = {}) =>
    Effect.gen(function* () {
      const token = yield* tokenSource(credentials)
      const http = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequestEffect((request) => Effect.map(token, (t) => HttpClientRequest.bearerToken(request, t))),
        HttpClient.transformResponse(Effect.timeout(timeout))
      )
      const client = yield* HttpApiClient.makeWith(AgentApi, { baseUrl: baseUrl.replace(/\/+$/, ""), httpClient: http })
      const path = (session_id: string) => ({ path: { session_id } })
      return AgentRestClient.of({
        submit: (request) =>
          client.incident.analyze({ payload: request }).pipe(
            Effect.map((accepted) => accepted.session_id),
            Effect.mapError(unavailable),
            Effect.withSpan("AgentRestClient.submit")
          ),
        status: (sessionId) =>
          client.incident.sessionStatus(path(sessionId)).pipe(
            Effect.mapError((e) => (e instanceof NotFoundProblem ? new SessionNotFound({ sessionId }) : unavailable(e))),
            Effect.withSpan("AgentRestClient.status")
          ),
        result: (sessionId) =>
          client.incident.sessionResult(path(sessionId)).pipe(
            Effect.mapError((e) =>
              e instanceof NotFoundProblem
                ? new SessionNotFound({ sessionId })
                : e instanceof ConflictProblem
                ? new ResultNotReady({ sessionId, status: e.detail ?? "not complete" })
                : unavailable(e)
            ),
            Effect.withSpan("AgentRestClient.result")
          )
      })
    })

  /** The client of `lifecycle.agentUrl`, needing an HttpClient. */
  static readonly layerHttp = Layer.effect(
    AgentRestClient,
    Effect.flatMap(LifecycleConfig, (c) =>
      AgentRestClient.make(c.agentUrl, c.agentRequestTimeout, {
        token: Option.getOrUndefined(c.agentToken),
        tokenFile: Option.getOrUndefined(c.agentTokenFile)
      }))
  )

  /** `layerHttp` on undici with the platform CA trusted (core `Tls/Trust`). */
  static readonly layer = AgentRestClient.layerHttp.pipe(Layer.provide(PlatformHttpClient))
}
