/**
 * RELIABILITY.md case 39: a provider stream that never ends its event (no blank line) is cut at a size limit with a
 * clear error instead of growing memory without bound.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { fake, llm } from "./Fake.ts"

describe("LLM streams", () => {
  it.live("cut an event that never ends at the size limit with a clear error", () =>
    Effect.gen(function* () {
      let written = 0
      const server = yield* fake((_, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: {\"choices\":[{\"delta\":{\"content\":\"")
        const line = "x".repeat(64 * 1024)
        // One line that never ends, written as fast as the reader takes it, until the client goes away.
        const more = () => {
          while (!res.destroyed && written < 64 * 1024 * 1024) {
            written += line.length
            if (!res.write(line)) return void res.once("drain", more)
          }
          res.end()
        }
        more()
      })
      const service = yield* llm({ provider: "openai", model: "m", endpoint: `${server.url}/v1` })
      const error = yield* service.stream({ messages: [{ role: "user", content: "hi" }] }).pipe(Stream.runDrain, Effect.flip)
      assert.strictEqual(error._tag, "LlmBadRequest")
      assert.match(error.message, /SSE event .*larger than 1 MiB/)
      assert.isBelow(written, 16 * 1024 * 1024, "the reader stopped long before the writer's own limit")
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
