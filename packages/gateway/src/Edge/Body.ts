/**
 * Request bodies under a byte limit. Past the limit nothing more is kept: the rest is read and discarded (up to
 * `discardFactor` times the limit, so the client can still read the 413 instead of seeing its upload reset), and
 * past that the connection is cut. A declared `Content-Length` over the limit is refused without keeping any of it.
 * The listeners this puts on the request come off again once it has an answer, whatever the answer is.
 */
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { IncomingMessage } from "node:http"
import { InvalidRequest, PayloadTooLarge } from "@kubemend/core/Errors"

const discardFactor = 8

type BodyError = PayloadTooLarge | InvalidRequest

const ignore = () => undefined

/** The body of a Node request as text, within `limitBytes`. */
export const readIncoming = (req: IncomingMessage, limitBytes: number) =>
  Effect.async<string, BodyError>((resume) => {
    // Built only when needed: an error captures a stack trace, which every request would pay for.
    const tooLarge = Effect.failSync(() => new PayloadTooLarge({ limitBytes }))
    const declared = Number(req.headers["content-length"] ?? "NaN")
    if (Number.isFinite(declared) && declared > limitBytes * discardFactor) {
      // Not worth draining: answer now; the connection closes after the answer.
      req.pause()
      return resume(tooLarge)
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limitBytes) chunks.push(chunk)
      else chunks.length = 0
      if (size > limitBytes * discardFactor) {
        settle(tooLarge, true)
        req.destroy()
      }
    }
    const onEnd = () => settle(size > limitBytes ? tooLarge : Effect.succeed(Buffer.concat(chunks).toString("utf8")), false)
    const onError = () => settle(Effect.fail(new InvalidRequest({ detail: "the request body could not be read" })), true)
    const onAborted = () => settle(Effect.fail(new InvalidRequest({ detail: "the client aborted the request" })), true)
    /** Takes our listeners off; a request that did not end cleanly keeps a silent `error` listener, so a late error is not thrown. */
    const detach = (broken: boolean) => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onAborted)
      if (broken && req.listenerCount("error") === 0) req.once("error", ignore)
    }
    const settle = (effect: Effect.Effect<string, BodyError>, broken: boolean) => {
      if (done) return
      done = true
      detach(broken)
      resume(effect)
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("aborted", onAborted)
    return Effect.sync(() => {
      if (done) return
      done = true
      detach(true)
      req.destroy()
    })
  })

/** The body of `request` as text, within `limitBytes` (413 past it). */
export const readBody = (request: HttpServerRequest.HttpServerRequest, limitBytes: number) =>
  readIncoming(NodeHttpServerRequest.toIncomingMessage(request), limitBytes)
