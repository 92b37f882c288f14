/** Fault injection for tests: failing requests, latency, and cutting open watches. */
import { type ApiError, injected } from "./Status.ts"
import type { WatchHub } from "./Watch.ts"

/** What a request is, for matching faults (and for the request log). */
export interface RequestAttributes {
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection. */
  readonly verb: string
  readonly group?: string
  /** Plural resource name (`pods`, `remediationrequests`). */
  readonly resource?: string
  readonly subresource?: string
  readonly namespace?: string
  readonly name?: string
}

/** Every given field must match; a list of verbs matches any of them. */
export interface FaultMatch {
  readonly verb?: string | ReadonlyArray<string>
  readonly group?: string
  readonly resource?: string
  readonly subresource?: string
  readonly namespace?: string
  readonly name?: string
}

export interface FailOptions extends FaultMatch {
  /** HTTP status to answer with (a Status object with the matching reason). */
  readonly status: number
  readonly message?: string
  /** Sent as `Retry-After` and `details.retryAfterSeconds`; defaults to 1 for 429. */
  readonly retryAfterSeconds?: number
}

interface Rule<A> {
  readonly match: FaultMatch
  remaining: number
  readonly value: A
}

const matches = (m: FaultMatch, r: RequestAttributes): boolean =>
  (m.verb === undefined || (typeof m.verb === "string" ? m.verb === r.verb : m.verb.includes(r.verb))) &&
  (m.group === undefined || m.group === (r.group ?? "")) &&
  (m.resource === undefined || m.resource === r.resource) &&
  (m.subresource === undefined || m.subresource === r.subresource) &&
  (m.namespace === undefined || m.namespace === r.namespace) &&
  (m.name === undefined || m.name === r.name)

const take = <A>(rules: Array<Rule<A>>, r: RequestAttributes): A | undefined => {
  const rule = rules.find((x) => x.remaining > 0 && matches(x.match, r))
  if (rule === undefined) return undefined
  rule.remaining -= 1
  if (rule.remaining === 0) rules.splice(rules.indexOf(rule), 1)
  return rule.value
}

export class Faults {
  private readonly failures: Array<Rule<ApiError>> = []
  private readonly delays: Array<Rule<number>> = []

  constructor(private readonly watches: WatchHub) {}

  /** Answer the next `count` matching requests with `options.status`. */
  failNext(count: number, options: FailOptions): void {
    const { status, message, retryAfterSeconds, ...match } = options
    const retry = retryAfterSeconds ?? (status === 429 ? 1 : undefined)
    this.failures.push({ match, remaining: count, value: injected(status, message, retry) })
  }

  /** Delay matching requests by `ms` (the next `count` of them, or all until removed). Returns the remover. */
  addLatency(ms: number, match: FaultMatch = {}, count = Number.POSITIVE_INFINITY): () => void {
    const rule: Rule<number> = { match, remaining: count, value: ms }
    this.delays.push(rule)
    return () => {
      const i = this.delays.indexOf(rule)
      if (i >= 0) this.delays.splice(i, 1)
    }
  }

  /** End every open watch stream now (clients see the server close the connection). */
  closeWatches(): number {
    return this.watches.closeAll()
  }

  reset(): void {
    this.failures.length = 0
    this.delays.length = 0
  }

  /** @internal the router's side */
  failureFor(r: RequestAttributes): ApiError | undefined {
    return take(this.failures, r)
  }

  /** @internal */
  latencyFor(r: RequestAttributes): number {
    return take(this.delays, r) ?? 0
  }
}
