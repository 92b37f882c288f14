/**
 * One policy for every API request, live or in memory: a deadline per request, 409 retries for updates (client-go's
 * 5 tries from 10 ms, doubling, with jitter), 429 retries that wait the server's `Retry-After` (bounded), and the
 * mapping of what is left to the domain errors. Nothing else leaves this module: raw exceptions never reach callers.
 */
import { ApiException } from "@kubernetes/client-node"
import { Data, Duration, Effect, Schedule } from "effect"
import { K8sConflict, K8sNotFound, K8sUnavailable } from "../K8s.ts"
import type { K8sSettings } from "./Config.ts"

/** A failed request as the transport saw it, before it becomes a domain error. */
export class HttpFailure extends Data.TaggedError("HttpFailure")<{
  /** HTTP status; absent for timeouts and network errors. */
  readonly status: number | undefined
  readonly message: string
  /** The server's `Retry-After`, when it sent one. */
  readonly retryAfter?: Duration.Duration
  readonly cause?: unknown
}> {}

const statusMessage = (body: unknown): string | undefined => {
  if (typeof body === "string" && body.length > 0) {
    try {
      return statusMessage(JSON.parse(body))
    } catch {
      return body.slice(0, 300)
    }
  }
  if (typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string") {
    return (body as { message: string }).message
  }
  return undefined
}

/** `Retry-After` is either delta-seconds or an HTTP date. */
export const parseRetryAfter = (value: string | undefined, now: number): Duration.Duration | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Duration.seconds(Math.max(0, seconds))
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Duration.millis(Math.max(0, at - now))
}

const headerOf = (headers: unknown, name: string): string | undefined => {
  if (typeof headers !== "object" || headers === null) return undefined
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : String(v)
  return undefined
}

/** Turns whatever the client library threw into an HttpFailure. */
export const fromUnknown = (error: unknown): HttpFailure => {
  if (error instanceof HttpFailure) return error
  if (error instanceof ApiException) {
    const retryAfter = parseRetryAfter(headerOf(error.headers, "retry-after"), Date.now())
    return new HttpFailure({
      status: error.code,
      message: statusMessage(error.body) ?? `HTTP ${error.code}`,
      ...(retryAfter === undefined ? {} : { retryAfter }),
      cause: error
    })
  }
  const status = (error as { statusCode?: unknown } | null)?.statusCode
  const message = error instanceof Error ? error.message : String(error)
  return new HttpFailure({ status: typeof status === "number" ? status : undefined, message, cause: error })
}

const noAnswer = (timeout: Duration.Duration) => new HttpFailure({ status: undefined, message: `no answer within ${Duration.format(timeout)}` })

const deadline = (settings: K8sSettings) => <A>(self: Effect.Effect<A, HttpFailure>) =>
  Effect.timeoutFail(self, { duration: settings.requestTimeout, onTimeout: () => noAnswer(settings.requestTimeout) })

/** Longest delay `setTimeout` takes; a longer one would fire at once. */
const maxTimerMs = 2 ** 31 - 1

/**
 * Wraps one request that really goes out (the live layer): `attempt` receives an AbortSignal that fires when the
 * deadline passes or the caller gives up. The deadline is a plain timer, not Effect.timeoutFail: that forks a fiber
 * racing a sleep, which cost more CPU than the rest of the call's bookkeeping. So it runs on the wall clock, not the
 * Effect Clock (a TestClock does not move it); the in-memory layer keeps `withPolicy`'s deadline.
 */
export const requestWithin = <A>(timeout: Duration.Duration, attempt: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, HttpFailure> =>
  Effect.async<A, HttpFailure>((resume) => {
    const controller = new AbortController()
    const ms = Duration.toMillis(timeout)
    let done = false
    const settle = (result: Effect.Effect<A, HttpFailure>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resume(result)
    }
    const timer = ms <= maxTimerMs
      ? setTimeout(() => {
        controller.abort()
        settle(Effect.fail(noAnswer(timeout)))
      }, ms)
      : undefined
    Promise.resolve().then(() => attempt(controller.signal)).then(
      (a) => settle(Effect.succeed(a)),
      (e: unknown) => settle(Effect.fail(fromUnknown(e)))
    )
    return Effect.sync(() => {
      done = true
      clearTimeout(timer)
      controller.abort()
    })
  })

/** client-go's conflict backoff: exponential from the base, jittered, `conflictTries` tries in all. */
const conflictSchedule = (settings: K8sSettings) =>
  Schedule.exponential(settings.conflictBaseDelay).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(Math.max(0, settings.conflictTries - 1))),
    Schedule.whileInput((e: HttpFailure) => e.status === 409)
  )

/** Waits what the server asked (cut to `maxRetryAfter`), or a short doubling delay when it asked nothing. */
const throttleSchedule = (settings: K8sSettings) =>
  Schedule.identity<HttpFailure>().pipe(
    Schedule.whileInput((e: HttpFailure) => e.status === 429),
    Schedule.intersect(Schedule.recurs(settings.throttleRetries)),
    Schedule.addDelay(([e, n]) => Duration.min(e.retryAfter ?? Duration.times(Duration.millis(200), 2 ** n), settings.maxRetryAfter))
  )

/**
 * `Effect.retry(self, schedule())`, with the schedule and its driver built only after a first failure (replayed into it, not
 * sent again): the success path of every API call then skips two
 * schedules and drivers, which cost more than the rest of the policy.
 */
const retryAfterFailure = <A>(
  self: Effect.Effect<A, HttpFailure>,
  schedule: () => Schedule.Schedule<unknown, HttpFailure>
): Effect.Effect<A, HttpFailure> =>
  Effect.catchAll(self, (first) => {
    let replay = true
    return Effect.retry(
      Effect.suspend(() => {
        if (!replay) return self
        replay = false
        return Effect.fail(first)
      }),
      schedule()
    )
  })

/**
 * Runs one API request under the policy. `retryConflicts` is for updates only: a create answered 409 means "already
 * exists" and must not be retried.
 */
export const withPolicy =
  (settings: K8sSettings, options: { readonly retryConflicts: boolean }) => <A>(attempt: Effect.Effect<A, HttpFailure>): Effect.Effect<A, HttpFailure> =>
    withRetries(settings, options)(deadline(settings)(attempt))

/** The policy's retries only, for an attempt that already has its deadline (`requestWithin`). */
export const withRetries =
  (settings: K8sSettings, options: { readonly retryConflicts: boolean }) => <A>(once: Effect.Effect<A, HttpFailure>): Effect.Effect<A, HttpFailure> => {
    const conflicts = options.retryConflicts ? retryAfterFailure(once, () => conflictSchedule(settings)) : once
    return retryAfterFailure(conflicts, () => throttleSchedule(settings))
  }

export const unavailable = (e: HttpFailure): K8sUnavailable =>
  new K8sUnavailable({
    message: e.status === undefined ? e.message : `Kubernetes API answered ${e.status}: ${e.message}`,
    ...(e.status === undefined ? {} : { status: e.status }),
    ...(e.cause === undefined ? {} : { cause: e.cause })
  })

export const notFoundOr = (kind: string, name: string) => (e: HttpFailure): K8sNotFound | K8sUnavailable =>
  e.status === 404 ? new K8sNotFound({ kind, name }) : unavailable(e)

export const conflictOr = (kind: string, name: string) => (e: HttpFailure): K8sConflict | K8sUnavailable =>
  e.status === 409 ? new K8sConflict({ kind, name, message: e.message }) : unavailable(e)

export const notFoundConflictOr = (kind: string, name: string) => (e: HttpFailure): K8sNotFound | K8sConflict | K8sUnavailable =>
  e.status === 404
    ? new K8sNotFound({ kind, name })
    : e.status === 409
    ? new K8sConflict({ kind, name, message: e.message })
    : unavailable(e)
