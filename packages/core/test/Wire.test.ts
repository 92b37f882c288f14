import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Errors from "../src/Errors.ts"
import { ProblemContentType } from "../src/Problem.ts"
import { problemBody, problemResponse, ProblemTypeBase, RpcCode, toJsonRpcError, toProblem, wire } from "../src/Wire.ts"

/** One realistic instance per domain error; the record type makes a missing tag a compile error here too. */
const samples: { [K in Errors.DomainError["_tag"]]: Extract<Errors.DomainError, { _tag: K }> } = {
  NotFound: new Errors.NotFound({ resource: "workflow", id: "w1" }),
  Conflict: new Errors.Conflict({ detail: "already exists" }),
  ValidationError: new Errors.ValidationError({ detail: "must not be empty", field: "rr_id" }),
  Unauthenticated: new Errors.Unauthenticated({ reason: "token_expired" }),
  Forbidden: new Errors.Forbidden({ detail: "console access denied" }),
  RateLimited: new Errors.RateLimited({ retryAfterSeconds: 0.2, scope: "ip" }),
  Draining: new Errors.Draining({}),
  PayloadTooLarge: new Errors.PayloadTooLarge({ limitBytes: 1048576 }),
  HeadersTooLarge: new Errors.HeadersTooLarge({}),
  UnsupportedMediaType: new Errors.UnsupportedMediaType({}),
  NotAcceptable: new Errors.NotAcceptable({}),
  McpDisabled: new Errors.McpDisabled({}),
  SessionLimitReached: new Errors.SessionLimitReached({ limit: 100 }),
  ParseError: new Errors.ParseError({}),
  InvalidRequest: new Errors.InvalidRequest({}),
  MethodNotFound: new Errors.MethodNotFound({ method: "nope" }),
  InvalidParams: new Errors.InvalidParams({ detail: "rr_id is empty" }),
  RrNotFound: new Errors.RrNotFound({ rrId: "rr-1" }),
  TaskNotFound: new Errors.TaskNotFound({ taskId: "t-1" }),
  TaskNotCancelable: new Errors.TaskNotCancelable({ taskId: "t-1" }),
  LlmCapacityExhausted: new Errors.LlmCapacityExhausted({}),
  ContentIntegrityViolation: new Errors.ContentIntegrityViolation({ name: "restart", version: "1.0.0" }),
  BatchSizeInvalid: new Errors.BatchSizeInvalid({ size: 0 }),
  ExportTooLarge: new Errors.ExportTooLarge({ limit: 10000 }),
  ReconstructionIncomplete: new Errors.ReconstructionIncomplete({ completeness: 0.3 }),
  DeadLetterQueueFull: new Errors.DeadLetterQueueFull({ capacity: 10000 }),
  SessionNotFound: new Errors.SessionNotFound({ sessionId: "s-1" }),
  ResultNotReady: new Errors.ResultNotReady({ sessionId: "s-1", status: "investigating" }),
  DependencyUnavailable: new Errors.DependencyUnavailable({ dependency: "storage" }),
  InternalError: new Errors.InternalError({})
}

describe("wire table", () => {
  for (const [tag, error] of Object.entries(samples) as Array<[Errors.DomainError["_tag"], Errors.DomainError]>) {
    it.effect(`${tag} round-trips to a problem body and a JSON-RPC error`, () =>
      Effect.gen(function* () {
        const row = wire[tag]
        const problem = yield* toProblem(error, "/api/v1/x")
        expect(problem.status).toBe(row.status)
        expect(problem.type).toBe(`https://kubemend.io/problems/${row.slug}`)
        expect(problem.title).toBe(row.title)
        expect(problem.instance).toBe("/api/v1/x")
        expect(problem.detail).toBeTypeOf("string")
        expect(problem.detail).not.toMatch(/at .*\.ts:\d+/)
        const rpc = toJsonRpcError(error)
        expect(rpc.code).toBe(row.rpc)
        expect(rpc.code).toBeLessThan(-32000 + 1)
        expect(rpc.code).toBeGreaterThanOrEqual(-32700)
        // The error decodes back from its own encoding (errors cross process boundaries as data).
        const encoded = Schema.encodeSync(Errors.DomainError)(error)
        expect(Schema.decodeUnknownSync(Errors.DomainError)(encoded)._tag).toBe(tag)
      }))
  }

  it("keeps the spec's named slugs and titles", () => {
    expect(problemBody(samples.BatchSizeInvalid, "b")).toMatchObject({ type: "b/validation-error", title: "Bad Request", status: 400 })
    expect(problemBody(samples.ResultNotReady, "b")).toMatchObject({ type: "b/conflict", title: "Conflict", status: 409 })
    expect(problemBody(samples.ContentIntegrityViolation, "b")).toMatchObject({
      type: "b/content-integrity-violation",
      title: "Content Changed Without Version Bump",
      status: 409
    })
    expect(problemBody(samples.Draining, "b")).toMatchObject({ type: "b/service-unavailable", title: "Service Unavailable", status: 503 })
    expect(problemBody(samples.McpDisabled, "b").status).toBe(501)
  })

  it("distinguishes the -32001 of each surface by its tag", () => {
    expect(toJsonRpcError(samples.RrNotFound)).toMatchObject({ code: -32001, message: "RemediationRequest Not Found" })
    expect(toJsonRpcError(samples.TaskNotFound)).toMatchObject({ code: -32001, message: "Task Not Found" })
    expect(toJsonRpcError(samples.MethodNotFound).code).toBe(RpcCode.MethodNotFound)
    expect(toJsonRpcError(samples.LlmCapacityExhausted)).toMatchObject({ code: -32000, data: { retryable: true } })
  })

  it.effect("a raw problem response carries the content type and Retry-After", () =>
    Effect.gen(function* () {
      const response = yield* problemResponse(samples.RateLimited)
      expect(response.status).toBe(429)
      expect(response.headers["content-type"]).toBe(ProblemContentType)
      expect(response.headers["retry-after"]).toBe("1")
    }))

  it.effect("uses the configured problem type base", () =>
    Effect.gen(function* () {
      const problem = yield* toProblem(samples.Forbidden).pipe(Effect.provideService(ProblemTypeBase, "https://example.org/p"))
      expect(problem.type).toBe("https://example.org/p/forbidden")
    }))
})
