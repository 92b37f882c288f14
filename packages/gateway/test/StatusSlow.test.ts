/**
 * A status-stream subscriber that stops reading, over real TCP: once the kernel's buffers are full and its unsent
 * bytes pass `subscriberBufferBytes` it is dropped, while another subscriber of the same RR keeps getting every
 * transition as it happens.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect } from "effect"
import { connect as netConnect, type Socket } from "node:net"
import { StatusHub } from "../src/Status/index.ts"
import { Infra, InfraLive, startTestGateway, token } from "./A2aHarness.ts"
import { open, rr, subscribeBody, updates } from "./StatusSupport.ts"

/** Phase metadata carries `block_message` / `workflow_id`, so each transition makes a frame of about this many bytes. */
const frameBytes = 40_000
const bound = 64 * 1024
/** The kernel holds a few MB for a reader that does not read; past that the gateway must drop it. */
const maxTransitions = 1000

/** A subscriber that sends its request and then never reads (its socket stays paused). */
const stalled = (url: string, bearer: string, rrId: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<Socket>((resolve) => {
        const body = subscribeBody(rrId)
        const socket = netConnect(Number(new URL(url).port), "127.0.0.1", () => {
          socket.write(
            `POST /a2a/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
          )
          resolve(socket)
        })
        socket.pause()
      })
    ),
    (socket) => Effect.sync(() => socket.destroy())
  )

layer(InfraLive, { excludeTestServices: true })("status stream slow readers over HTTP", (it) => {
  it.scoped("a reader that stops reading is dropped at the buffer bound; the other gets every transition", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-slow", { overallPhase: "Analyzing" }))
      const gw = yield* startTestGateway({ status: { subscriberBufferBytes: bound } })
      const hub = Context.get(gw.context as Context.Context<StatusHub>, StatusHub)
      const bearer = yield* token("sre")
      const slow = yield* stalled(gw.url, bearer, "rr-slow")
      const fast = yield* open(gw.url, yield* token("observability"), subscribeBody("rr-slow"))
      const transitions = (n: number) => Effect.promise(() => fast.until((f) => updates(f).length >= n))
      yield* transitions(1)
      // The stalled reader cannot tell us it was accepted; the hub can (bounded wait).
      for (let i = 0; (yield* hub.size) < 2; i++) {
        assert.isBelow(i, 1000, "the stalled subscriber was never accepted")
        yield* Effect.sleep("5 millis")
      }

      // One transition at a time, each waited for at the fast reader: it never falls behind, the stalled one only does.
      let sent = 0
      while ((yield* hub.dropped) === 0) {
        assert.isBelow(sent, maxTransitions, "the stalled reader was never dropped")
        sent++
        const filler = `${sent} ${"x".repeat(frameBytes)}`
        kube.put(rr(
          "rr-slow",
          sent % 2 === 1
            ? { overallPhase: "Blocked", blockReason: "ResourceBusy", blockMessage: filler }
            : { overallPhase: "Running", selectedWorkflowRef: { workflowId: filler } }
        ))
        yield* transitions(sent + 1)
      }
      assert.strictEqual(yield* hub.dropped, 1)
      assert.strictEqual(yield* hub.size, 1)

      kube.put(rr("rr-slow", { overallPhase: "Completed", outcome: "Remediated" }))
      yield* transitions(sent + 2)
      yield* Effect.promise(() => fast.reading)
      const phases = updates(fast.frames()).map((u) => u.phase)
      assert.strictEqual(phases.length, sent + 2)
      assert.strictEqual(phases.at(-1), "Completed")

      // The stalled reader finds what the kernel held, then a cut connection: never the final event.
      const received = yield* Effect.promise(() =>
        new Promise<string>((resolve) => {
          const chunks: Array<Buffer> = []
          slow.on("data", (c: Buffer) => chunks.push(c))
          slow.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
          slow.on("error", () => undefined)
          slow.resume()
        })
      )
      assert.include(received, "event: status/update")
      assert.notInclude(received, "\"phase\":\"Completed\"")
    }), { timeout: 60_000 })
})
