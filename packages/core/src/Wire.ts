/**
 * The one table from domain errors to the wire: HTTP status, problem slug and title, JSON-RPC code.
 * A missing row is a compile error (`satisfies Record<DomainError["_tag"], WireRow>`).
 */
import { HttpServerResponse } from "@effect/platform"
import { Context, Effect } from "effect"
import type { DomainError } from "./Errors.ts"
import { ProblemByStatus, ProblemContentType, type Problem, type ProblemBody, type ProblemStatus } from "./Problem.ts"

export interface WireRow {
  readonly status: ProblemStatus
  readonly slug: string
  readonly title: string
  /** JSON-RPC code when this error ends a JSON-RPC call (MCP, A2A, status stream). */
  readonly rpc: number
}

/** JSON-RPC 2.0 standard codes; our own codes (-32000..-32099) appear only in the table below. */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603
} as const

export const wire = {
  NotFound: { status: 404, slug: "not-found", title: "Not Found", rpc: -32001 },
  Conflict: { status: 409, slug: "conflict", title: "Conflict", rpc: -32000 },
  ValidationError: { status: 400, slug: "validation-error", title: "Bad Request", rpc: RpcCode.InvalidParams },
  Unauthenticated: { status: 401, slug: "unauthorized", title: "Authentication Failed", rpc: -32000 },
  Forbidden: { status: 403, slug: "forbidden", title: "Forbidden", rpc: -32002 },
  RateLimited: { status: 429, slug: "rate-limited", title: "Too Many Requests", rpc: -32000 },
  Draining: { status: 503, slug: "service-unavailable", title: "Service Unavailable", rpc: -32000 },
  PayloadTooLarge: { status: 413, slug: "payload-too-large", title: "Payload Too Large", rpc: RpcCode.InvalidRequest },
  HeadersTooLarge: {
    status: 431,
    slug: "request-header-fields-too-large",
    title: "Request Header Fields Too Large",
    rpc: RpcCode.InvalidRequest
  },
  UnsupportedMediaType: {
    status: 415,
    slug: "unsupported-media-type",
    title: "Unsupported Media Type",
    rpc: RpcCode.InvalidRequest
  },
  NotAcceptable: { status: 406, slug: "not-acceptable", title: "Not Acceptable", rpc: RpcCode.InvalidRequest },
  McpDisabled: { status: 501, slug: "mcp-disabled", title: "MCP Disabled", rpc: RpcCode.MethodNotFound },
  SessionLimitReached: {
    status: 503,
    slug: "session-limit-reached",
    title: "Too Many Sessions",
    rpc: -32000
  },
  ParseError: { status: 400, slug: "parse-error", title: "Parse Error", rpc: RpcCode.ParseError },
  InvalidRequest: { status: 400, slug: "invalid-request", title: "Invalid Request", rpc: RpcCode.InvalidRequest },
  MethodNotFound: { status: 400, slug: "method-not-found", title: "Method Not Found", rpc: RpcCode.MethodNotFound },
  InvalidParams: { status: 400, slug: "invalid-params", title: "Invalid Params", rpc: RpcCode.InvalidParams },
  RrNotFound: { status: 404, slug: "rr-not-found", title: "RemediationRequest Not Found", rpc: -32001 },
  TaskNotFound: { status: 404, slug: "task-not-found", title: "Task Not Found", rpc: -32001 },
  TaskNotCancelable: { status: 409, slug: "task-not-cancelable", title: "Task Not Cancelable", rpc: -32002 },
  LlmCapacityExhausted: {
    status: 503,
    slug: "llm-capacity-exhausted",
    title: "LLM Capacity Exhausted",
    rpc: -32000
  },
  ContentIntegrityViolation: {
    status: 409,
    slug: "content-integrity-violation",
    title: "Content Changed Without Version Bump",
    rpc: -32000
  },
  BatchSizeInvalid: { status: 400, slug: "validation-error", title: "Bad Request", rpc: RpcCode.InvalidParams },
  ExportTooLarge: { status: 413, slug: "export-too-large", title: "Export Too Large", rpc: -32000 },
  ReconstructionIncomplete: {
    status: 400,
    slug: "reconstruction-incomplete",
    title: "Reconstruction Incomplete",
    rpc: -32000
  },
  DeadLetterQueueFull: {
    status: 503,
    slug: "dead-letter-queue-full",
    title: "Service Unavailable",
    rpc: -32000
  },
  SessionNotFound: { status: 404, slug: "session-not-found", title: "Session Not Found", rpc: -32001 },
  ResultNotReady: { status: 409, slug: "conflict", title: "Conflict", rpc: -32000 },
  DependencyUnavailable: {
    status: 503,
    slug: "service-unavailable",
    title: "Service Unavailable",
    rpc: -32000
  },
  InternalError: { status: 500, slug: "internal-error", title: "Internal Server Error", rpc: RpcCode.InternalError }
} as const satisfies Record<DomainError["_tag"], WireRow>

/** Base URI of problem `type`s; configurable per deployment. */
export class ProblemTypeBase extends Context.Reference<ProblemTypeBase>()("@kubemend/core/ProblemTypeBase", {
  defaultValue: () => "https://kubemend.io/problems"
}) {}

/** A human sentence for the `detail` member; never internals. */
export const describe = (e: DomainError): string => {
  switch (e._tag) {
    case "NotFound":
      return e.detail ?? `${e.resource} ${e.id} not found`
    case "RateLimited":
      return e.detail ?? `rate limit exceeded (${e.scope}); retry after ${e.retryAfterSeconds}s`
    case "PayloadTooLarge":
      return e.detail ?? `request body exceeds ${e.limitBytes} bytes`
    case "MethodNotFound":
      return e.detail ?? `method not found: ${e.method}`
    case "RrNotFound":
      return `RemediationRequest ${e.rrId} not found`
    case "TaskNotFound":
      return `task ${e.taskId} not found`
    case "SessionNotFound":
      return `session ${e.sessionId} not found`
    case "ResultNotReady":
      return `session ${e.sessionId} is ${e.status}; the result is available once it completes`
    case "ContentIntegrityViolation":
      return e.detail ?? `workflow ${e.name} version ${e.version} was registered with different content; bump the version`
    case "BatchSizeInvalid":
      return e.detail ?? `a batch must hold between 1 and 1000 events (got ${e.size})`
    case "SessionLimitReached":
      return e.detail ?? `at most ${e.limit} concurrent sessions are allowed`
    case "DependencyUnavailable":
      return e.detail ?? `${e.dependency} is unavailable`
    case "ValidationError":
      return e.field === undefined ? e.detail : `${e.field}: ${e.detail}`
    default:
      return e.detail ?? wire[e._tag].title
  }
}

export const problemBody = (e: DomainError, base: string, instance?: string): ProblemBody => {
  const row = wire[e._tag]
  return {
    type: `${base}/${row.slug}`,
    title: row.title,
    status: row.status,
    detail: describe(e),
    ...(instance === undefined ? {} : { instance })
  }
}

/** The HttpApi error value for a domain error (its class carries the status annotation). */
export const toProblem = (e: DomainError, instance?: string): Effect.Effect<Problem> =>
  Effect.map(ProblemTypeBase, (base) => {
    const row = wire[e._tag]
    const Problem = ProblemByStatus[row.status] as new(body: ProblemBody) => Problem
    return new Problem(problemBody(e, base, instance))
  })

/** A ready `application/problem+json` response, for raw routes (MCP, A2A, SSE, middleware). */
export const problemResponse = (e: DomainError, instance?: string) =>
  Effect.map(ProblemTypeBase, (base) => {
    const body = problemBody(e, base, instance)
    const headers: Record<string, string> = { "content-type": ProblemContentType }
    if (e._tag === "RateLimited") headers["retry-after"] = String(Math.max(1, Math.ceil(e.retryAfterSeconds)))
    return HttpServerResponse.text(JSON.stringify(body), { status: body.status, headers })
  })

export interface JsonRpcErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export const toJsonRpcError = (e: DomainError): JsonRpcErrorObject => {
  const row = wire[e._tag]
  const data: Record<string, unknown> = { tag: e._tag, detail: describe(e) }
  if (e._tag === "LlmCapacityExhausted") Object.assign(data, { retryable: true, reason: "llm_concurrency_exhausted" })
  if (e._tag === "RateLimited") Object.assign(data, { retryable: true, retryAfterSeconds: e.retryAfterSeconds })
  return { code: row.rpc, message: row.title, data }
}
