/**
 * Request bodies under a byte limit. Past the limit nothing more is kept: the rest is read and discarded (up to
 * `discardFactor` times the limit, so the client can still read the 413 instead of seeing its upload reset), and
 * past that the connection is cut. A declared `Content-Length` over the limit is refused without keeping any of it.
 */
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { InvalidRequest, PayloadTooLarge } from "@kubemend/core/Errors"

const discardFactor = 8

export const readBody = (request: HttpServerRequest.HttpServerRequest, limitBytes: number) =>
  Effect.async<string, PayloadTooLarge | InvalidRequest>((resume) => {
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const tooLarge = new PayloadTooLarge({ limitBytes })
    const declared = Number(req.headers["content-length"] ?? "NaN")
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const settle = (effect: Effect.Effect<string, PayloadTooLarge | InvalidRequest>) => {
      if (done) return
      done = true
      resume(effect)
    }
    if (Number.isFinite(declared) && declared > limitBytes * discardFactor) {
      // Not worth draining: answer now; the connection closes after the answer.
      req.pause()
      return settle(Effect.fail(tooLarge))
    }
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= limitBytes) chunks.push(chunk)
      else chunks.length = 0
      if (size > limitBytes * discardFactor) {
        req.destroy()
        settle(Effect.fail(tooLarge))
      }
    })
    req.on("end", () => settle(size > limitBytes ? Effect.fail(tooLarge) : Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
    req.on("error", () => settle(Effect.fail(new InvalidRequest({ detail: "the request body could not be read" }))))
    req.on("aborted", () => settle(Effect.fail(new InvalidRequest({ detail: "the client aborted the request" }))))
    return Effect.sync(() => {
      if (!done) req.destroy()
    })
  })
