import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { jsonLogger } from "../src/Logger.ts"

describe("JSON logger", () => {
  it.effect("writes one JSON line with level, ISO-8601 UTC ts, msg and context fields", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      yield* Effect.logWarning("reconcile failed").pipe(
        Effect.annotateLogs({ controller: "platform", name: "kubemend", namespace: "kubemend-system", phase: "Error" }),
        Effect.provide(Logger.replace(Logger.defaultLogger, jsonLogger((l) => lines.push(l))))
      )
      expect(lines).toHaveLength(1)
      const record = JSON.parse(lines[0]!)
      expect(record).toMatchObject({
        level: "warn",
        msg: "reconcile failed",
        controller: "platform",
        name: "kubemend",
        namespace: "kubemend-system",
        phase: "Error"
      })
      expect(record.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }))
})
