/**
 * Raw JSON requests with client-node's KubeConfig doing auth and TLS (`applyToHTTPSOptions`: tokens, client certs,
 * exec/OIDC plugins, in-cluster files). Used where the typed clients get in the way: discovery, generic reads of any
 * kind (exact JSON, so redaction sees what the server sent) and watches.
 *
 * Watches are streamed here rather than through client-node's `Watch`: `Watch` hands out its AbortController only
 * after the response headers arrive, so a server that accepts the connection and never answers cannot be cancelled;
 * it also drops the error body (Status reason, Retry-After) and ignores unparsable lines. This request is aborted by
 * the caller's scope at any point, and the response-header wait has the request deadline.
 */
import type { KubeConfig } from "@kubernetes/client-node"
import { Duration, Effect, Stream } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import * as readline from "node:readline"
import { HttpFailure, fromUnknown, parseRetryAfter } from "./Retry.ts"

export type Query = Readonly<Record<string, string | undefined>>

const maxErrorBody = 64 * 1024

const urlFor = (kc: KubeConfig, path: string, query: Query): URL => {
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new HttpFailure({ status: undefined, message: "kubeconfig has no current cluster" })
  const url = new URL(cluster.server.replace(/\/+$/, "") + path)
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v)
  return url
}

/** Sends a GET and resolves with the response once headers are in; rejects on network errors or abort. */
const send = async (kc: KubeConfig, url: URL, signal: AbortSignal): Promise<http.IncomingMessage> => {
  const options: https.RequestOptions = {}
  await kc.applyToHTTPSOptions(options)
  const client = url.protocol === "https:" ? https : http
  return await new Promise((resolve, reject) => {
    const req = client.request(url, {
      ...options,
      method: "GET",
      headers: { ...options.headers, accept: "application/json" },
      signal
    }, resolve)
    req.on("error", reject)
    req.end()
  })
}

const readBody = (res: http.IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    res.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
    })
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    res.on("error", reject)
  })

const failureOf = async (res: http.IncomingMessage): Promise<HttpFailure> => {
  const body = await readBody(res, maxErrorBody).catch(() => "")
  let message = `HTTP ${res.statusCode}`
  try {
    const status = JSON.parse(body) as { message?: unknown }
    if (typeof status.message === "string") message = status.message
  } catch {
    if (body !== "") message = body.slice(0, 300)
  }
  const header = res.headers["retry-after"]
  const retryAfter = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now())
  return new HttpFailure({ status: res.statusCode, message, ...(retryAfter === undefined ? {} : { retryAfter }) })
}

/** GET one JSON document. The signal aborts the request (deadline or interruption). */
export const getJson = (kc: KubeConfig, path: string, query: Query = {}) => async (signal: AbortSignal): Promise<unknown> => {
  const res = await send(kc, urlFor(kc, path, query), signal)
  if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) throw await failureOf(res)
  return JSON.parse(await readBody(res, Number.POSITIVE_INFINITY)) as unknown
}

/** GET a text answer (container logs), keeping at most `limit` bytes of it. */
export const getText = (kc: KubeConfig, path: string, query: Query, limit: number) => async (signal: AbortSignal): Promise<string> => {
  const res = await send(kc, urlFor(kc, path, query), signal)
  if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) throw await failureOf(res)
  return readBody(res, limit)
}

/**
 * One watch request as a stream of parsed lines; it ends when the server closes the response. Interrupting the stream
 * aborts the request. `connectTimeout` bounds the wait for the response headers.
 */
export const watchLines = (
  kc: KubeConfig,
  path: string,
  query: Query,
  connectTimeout: Duration.Duration
): Stream.Stream<unknown, HttpFailure> =>
  Stream.asyncScoped<unknown, HttpFailure>((emit) =>
    Effect.gen(function* () {
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const url = yield* Effect.try({ try: () => urlFor(kc, path, { ...query, watch: "true" }), catch: fromUnknown })
      const res = yield* Effect.tryPromise({ try: () => send(kc, url, controller.signal), catch: fromUnknown }).pipe(
        Effect.timeoutFail({
          duration: connectTimeout,
          onTimeout: () => new HttpFailure({ status: undefined, message: "watch: no response headers in time" })
        })
      )
      if (res.statusCode !== 200) return yield* Effect.promise(() => failureOf(res)).pipe(Effect.flip)
      // Half-open connections (a vanished peer) are found by TCP keepalive instead of hanging forever.
      res.socket.setKeepAlive(true, 30_000)
      const lines = readline.createInterface({ input: res, crlfDelay: Number.POSITIVE_INFINITY })
      lines.on("line", (line) => {
        if (line.trim() === "") return
        let parsed: unknown
        try {
          parsed = JSON.parse(line)
        } catch (e) {
          void emit.fail(new HttpFailure({ status: undefined, message: "watch: unparsable event line", cause: e }))
          return
        }
        void emit.single(parsed)
      })
      // A connection cut mid-stream is the server closing the watch: the informer reconnects from the last version.
      const ended = () => void emit.end()
      lines.on("close", ended)
      lines.on("error", ended)
      res.on("error", ended)
    }), { bufferSize: 1024, strategy: "suspend" })
