import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { decode, failure, isNotification, salvageId, success } from "../src/JsonRpc.ts"
import { toJsonRpcError } from "../src/Wire.ts"

const errorOf = (text: string) => Effect.flip(decode(text))

describe("JSON-RPC codec", () => {
  it.effect("decodes a request and a notification", () =>
    Effect.gen(function* () {
      const single = yield* decode(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }))
      expect(single._tag).toBe("Single")
      if (single._tag === "Single") expect(isNotification(single.request)).toBe(false)
      const note = yield* decode(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
      if (note._tag === "Single") expect(isNotification(note.request)).toBe(true)
    }))

  it.effect("a request nesting deeper than 1000 levels is -32600, whatever the depth", () =>
    Effect.gen(function* () {
      const nested = (levels: number) => `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${"[".repeat(levels - 2)}${"]".repeat(levels - 2)}}}`
      expect((yield* decode(nested(1000)))._tag).toBe("Single")
      for (const levels of [1001, 1_000_000]) {
        const e = yield* errorOf(nested(levels))
        expect(e._tag).toBe("InvalidRequest")
        expect(toJsonRpcError(e).code).toBe(-32600)
      }
    }))

  it.effect("bad JSON is -32700", () =>
    Effect.gen(function* () {
      const e = yield* errorOf("{not json")
      expect(e._tag).toBe("ParseError")
      expect(toJsonRpcError(e).code).toBe(-32700)
    }))

  it.effect("bad envelopes are -32600", () =>
    Effect.gen(function* () {
      for (
        const body of [
          { id: 1, method: "x" },
          { jsonrpc: "1.0", id: 1, method: "x" },
          { jsonrpc: "2.0", id: 1 },
          { jsonrpc: "2.0", id: 1, method: "" },
          { jsonrpc: "2.0", id: { nested: true }, method: "x" },
          { jsonrpc: "2.0", id: 1, method: "x", params: "scalar" },
          "a string",
          42
        ]
      ) {
        const e = yield* errorOf(JSON.stringify(body))
        expect(e._tag).toBe("InvalidRequest")
        expect(toJsonRpcError(e).code).toBe(-32600)
      }
      expect((yield* errorOf("[]"))._tag).toBe("InvalidRequest")
    }))

  it.effect("a batch keeps each member's outcome", () =>
    Effect.gen(function* () {
      const batch = yield* decode(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }, { nope: true }]))
      expect(batch._tag).toBe("Batch")
      if (batch._tag === "Batch") {
        expect(Either.isRight(batch.requests[0]!)).toBe(true)
        expect(Either.isLeft(batch.requests[1]!)).toBe(true)
      }
    }))

  it("__proto__ keys do no harm", () =>
    Effect.runPromise(decode("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"__proto__\":{\"polluted\":true}}}")).then(() => {
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }))

  it("answers with the request's id when it can be salvaged", () => {
    expect(salvageId("{\"id\": 3, \"method\": 5}")).toBe(3)
    expect(salvageId("garbage")).toBeNull()
    expect(success(1, { ok: true })).toEqual({ jsonrpc: "2.0", id: 1, result: { ok: true } })
    expect(failure(null, { code: -32700, message: "Parse Error" })).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse Error" }
    })
  })
})
