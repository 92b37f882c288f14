/**
 * The proxy to the gateway, on Node's own request and response so a stream passes through as it comes: each chunk
 * the gateway writes (one SSE event) is written to the browser at once, nothing is buffered. The browser's cookie
 * and any Authorization it sent are dropped; the session's access token goes up as the bearer. The timeout is the
 * longest silence from the gateway (as nginx's `proxy_read_timeout`): 504 before the answer started, a cut stream
 * after.
 */
import * as Http from "node:http"
import * as Https from "node:https"
import { ProblemContentType } from "@kubemend/core/Problem"

/** Hop-by-hop headers (RFC 9110 §7.6.1) and what must not cross the proxy in either direction. */
const dropRequest = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "cookie",
  "authorization"
])
const dropResponse = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "set-cookie"
])

export interface ProxyOptions {
  readonly upstream: string
  readonly timeoutMs: number
  readonly bearer: string | undefined
  /** Headers every answer carries (the console's security headers, a refreshed session cookie). */
  readonly headers: Record<string, string | Array<string>>
  /** Problem type base (`https://kubemend.io/problems`). */
  readonly problemBase: string
}

const problem = (res: Http.ServerResponse, status: 502 | 504, detail: string, options: ProxyOptions) => {
  if (res.headersSent) return void res.destroy()
  const [slug, title] = status === 504 ? ["gateway-timeout", "Gateway Timeout"] : ["bad-gateway", "Bad Gateway"]
  res.writeHead(status, { ...options.headers, "content-type": ProblemContentType, "cache-control": "no-store" })
  res.end(JSON.stringify({ type: `${options.problemBase}/${slug}`, title, status, detail }))
}

/** Forwards one request; resolves when the answer is over (sent, failed or the browser went away). */
export const forward = (req: Http.IncomingMessage, res: Http.ServerResponse, options: ProxyOptions): Promise<void> =>
  new Promise((resolve) => {
    const target = new URL(req.url ?? "/", options.upstream)
    const headers: Http.OutgoingHttpHeaders = {}
    for (const [name, value] of Object.entries(req.headers)) {
      if (!dropRequest.has(name) && value !== undefined) headers[name] = value
    }
    if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`
    const client = req.socket.remoteAddress ?? ""
    headers["x-forwarded-for"] = req.headers["x-forwarded-for"] === undefined ? client : `${req.headers["x-forwarded-for"]}, ${client}`
    headers["x-forwarded-proto"] = (req.socket as { encrypted?: boolean }).encrypted === true ? "https" : "http"
    if (req.headers.host !== undefined) headers["x-forwarded-host"] = req.headers.host
    const request = (target.protocol === "https:" ? Https : Http).request(target, { method: req.method ?? "GET", headers })
    let finished = false
    const done = () => {
      if (finished) return
      finished = true
      resolve()
    }
    request.setTimeout(options.timeoutMs, () => request.destroy(Object.assign(new Error("upstream timeout"), { code: "UPSTREAM_TIMEOUT" })))
    request.on("response", (upstream) => {
      const out: Http.OutgoingHttpHeaders = { ...options.headers }
      for (const [name, value] of Object.entries(upstream.headers)) {
        if (!dropResponse.has(name) && value !== undefined) out[name] = value
      }
      const sse = String(upstream.headers["content-type"] ?? "").startsWith("text/event-stream")
      // Any proxy in front (nginx, an OpenShift route) must not hold the stream either.
      if (sse) out["x-accel-buffering"] = "no"
      res.writeHead(upstream.statusCode ?? 502, out)
      if (sse) res.flushHeaders()
      upstream.on("data", (chunk: Buffer) => {
        res.write(chunk)
      })
      upstream.on("end", () => res.end(done))
      upstream.on("error", () => {
        res.destroy()
        done()
      })
    })
    request.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "UPSTREAM_TIMEOUT") {
        problem(res, 504, `the gateway was silent for ${options.timeoutMs / 1000} s`, options)
      } else {
        problem(res, 502, "the gateway could not be reached", options)
      }
      done()
    })
    // The browser left: stop the upstream call too (an SSE stream would otherwise stay open at the gateway).
    res.on("close", () => {
      if (!res.writableFinished) request.destroy()
      done()
    })
    req.pipe(request)
  })
