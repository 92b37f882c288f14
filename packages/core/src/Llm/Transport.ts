/**
 * The one HTTP path every adapter uses: per-attempt timeout, capped exponential retries for 429/5xx/network/timeout
 * (Retry-After wins), status -> error mapping.
 */
import type { HttpClient, HttpClientResponse } from "@effect/platform"
import { HttpClientRequest } from "@effect/platform"
import { Clock, Data, Duration, Effect, Schedule, Stream } from "effect"
import type { LlmSettings } from "./Config.ts"
import { LlmBadRequest, type LlmError, LlmRateLimited, LlmUnavailable } from "./Errors.ts"

/** Headers for one call; gets the exact body bytes because SigV4 signs them. */
export type Auth = (url: URL, body: string) => Effect.Effect<Record<string, string>, LlmError>

export interface HttpCall {
  readonly url: string
  readonly body: unknown
  readonly auth: Auth
}

export interface Transport {
  /** POSTs JSON and returns the parsed JSON answer. */
  readonly postJson: (call: HttpCall) => Effect.Effect<unknown, LlmError>
  /** POSTs JSON and streams the answer's bytes. Only the part up to the response headers is retried. */
  readonly postStream: (call: HttpCall) => Stream.Stream<Uint8Array, LlmError>
}

/** A failure worth another attempt; turned into LlmRateLimited/LlmUnavailable once retries are spent. */
class Transient extends Data.TaggedError("Transient")<{
  readonly message: string
  readonly status?: number
  readonly retryAfter?: Duration.Duration
}> {}

/** A provider asking for more than this is not waited for longer (the investigation has its own deadline). */
const maxRetryAfter = Duration.seconds(60)

export const parseRetryAfter = (value: string | undefined, now: number): Duration.Duration | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Duration.min(Duration.seconds(Math.max(0, seconds)), maxRetryAfter)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Duration.min(Duration.millis(Math.max(0, date - now)), maxRetryAfter)
}

const snippet = (text: string) => (text.length > 500 ? `${text.slice(0, 500)}…` : text)

const checkStatus = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function* () {
    if (response.status >= 200 && response.status < 300) return response
    const text = yield* Effect.orElseSucceed(response.text, () => "")
    const message = `HTTP ${response.status}: ${snippet(text)}`
    if (response.status === 429 || response.status === 408 || response.status >= 500) {
      const retryAfter = parseRetryAfter(response.headers["retry-after"], yield* Clock.currentTimeMillis)
      return yield* new Transient({
        message,
        status: response.status,
        ...(retryAfter === undefined ? {} : { retryAfter })
      })
    }
    return yield* new LlmBadRequest({ message, status: response.status })
  })

const giveUp = (e: Transient): LlmRateLimited | LlmUnavailable =>
  e.status === 429
    ? new LlmRateLimited({
      message: e.message,
      ...(e.retryAfter === undefined ? {} : { retryAfterSeconds: Duration.toSeconds(e.retryAfter) })
    })
    : new LlmUnavailable({ message: e.message, ...(e.status === undefined ? {} : { status: e.status }) })

export const makeTransport = (client: HttpClient.HttpClient, settings: LlmSettings): Transport => {
  // Retry-After overrides the backoff step; the exponential step itself is capped at retryMaxDelay.
  const schedule = Schedule.exponential(settings.retryBaseDelay, 2).pipe(
    Schedule.modifyDelay((_, d) => Duration.min(d, settings.retryMaxDelay)),
    Schedule.intersect(Schedule.recurs(settings.maxRetries)),
    Schedule.intersect(Schedule.identity<Transient | LlmError>()),
    Schedule.modifyDelay(([, e], d) => e._tag === "Transient" && e.retryAfter !== undefined ? e.retryAfter : d)
  )

  const retried = <A>(attempt: Effect.Effect<A, Transient | LlmError>) =>
    attempt.pipe(
      Effect.tapError((e) =>
        e._tag === "Transient"
          ? Effect.logWarning("llm request attempt failed").pipe(
            Effect.annotateLogs({ reason: e.message, status: e.status ?? "none" })
          )
          : Effect.void
      ),
      Effect.retry({ schedule, while: (e) => e._tag === "Transient" }),
      Effect.catchTag("Transient", (e) => Effect.fail(giveUp(e)))
    )

  const timedOut = () => new Transient({ message: `no answer within ${Duration.format(settings.timeout)}` })

  const prepare = (call: HttpCall) =>
    Effect.gen(function* () {
      const body = JSON.stringify(call.body)
      const headers = yield* call.auth(new URL(call.url), body)
      return HttpClientRequest.post(call.url).pipe(
        HttpClientRequest.setHeaders(headers),
        HttpClientRequest.bodyText(body, "application/json")
      )
    })

  const exchange = <A>(
    request: HttpClientRequest.HttpClientRequest,
    then: (r: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, Transient | LlmError>
  ) =>
    client.execute(request).pipe(
      Effect.catchTag("RequestError", "ResponseError", (e) => new Transient({ message: e.message })),
      Effect.flatMap(checkStatus),
      Effect.flatMap(then),
      Effect.timeoutFail({ duration: settings.timeout, onTimeout: timedOut })
    )

  const readJson = (response: HttpClientResponse.HttpClientResponse) =>
    Effect.gen(function* () {
      const text = yield* Effect.mapError(response.text, (e) => new Transient({ message: e.message }))
      return yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new LlmBadRequest({ message: `answer is not JSON: ${snippet(text)}`, status: response.status })
      })
    })

  return {
    postJson: (call) => Effect.flatMap(prepare(call), (request) => retried(exchange(request, readJson))),
    postStream: (call) =>
      Stream.unwrap(
        Effect.flatMap(prepare(call), (request) => retried(exchange(request, Effect.succeed))).pipe(
          Effect.map((response) =>
            response.stream.pipe(
              Stream.mapError((e) => new LlmUnavailable({ message: `stream broke: ${e.message}` })),
              Stream.timeoutFail(
                () => new LlmUnavailable({ message: `stream idle for ${Duration.format(settings.timeout)}` }),
                settings.timeout
              )
            )
          )
        )
      )
  }
}
