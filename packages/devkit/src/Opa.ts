/**
 * A stand-in for Open Policy Agent's REST API on loopback, evaluating with the in-process Rego subset
 * (`core/Rego.ts`), so the local platform and tests talk to policies exactly as the operator talks to OPA in a
 * cluster: `PUT /v1/policies/{id}` (the module as text; 400 with OPA's error body when it does not parse),
 * `DELETE /v1/policies/{id}`, `GET /v1/policies`, `POST /v1/data/{path}` with `{input}` answering `{result}` (no
 * `result` key when the document is undefined), and `GET /health`; over HTTPS when given a certificate. `setFault("unavailable")` answers 503,
 * `"hang"` never answers: what an unreachable engine looks like to the caller.
 */
import { Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { RegoEvalError, RegoPolicies, RegoSyntaxError } from "./Rego.ts"
import { listenScoped } from "./Listen.ts"

export type OpaFault = "none" | "unavailable" | "hang"

export interface DevOpaOptions {
  readonly host?: string
  readonly port?: number
  /** Serve HTTPS with this certificate (PEM), as the operator-deployed OPA does. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string }
  /** Modules loaded at start, by id. */
  readonly policies?: Readonly<Record<string, string>>
}

export interface DevOpa {
  readonly url: string
  readonly policies: RegoPolicies
  readonly setFault: (fault: OpaFault) => void
  /** Data API requests answered so far. */
  readonly evaluations: () => number
}

const maxBody = 1024 * 1024

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage) =>
  new Promise<string | undefined>((resolve) => {
    let size = 0
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size <= maxBody) chunks.push(c)
    })
    req.on("end", () => resolve(size > maxBody ? undefined : Buffer.concat(chunks).toString("utf8")))
  })

export const make = (options: DevOpaOptions = {}) =>
  Effect.gen(function* () {
    const policies = new RegoPolicies()
    for (const [id, text] of Object.entries(options.policies ?? {})) policies.put(id, text)
    let fault: OpaFault = "none"
    let evaluations = 0

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      if (fault === "hang") return
      if (fault === "unavailable") return send(res, 503, { code: "internal_error", message: "unavailable (fault injected)" })
      const url = new URL(req.url ?? "/", "http://opa")
      const body = await readBody(req)
      if (body === undefined) return send(res, 413, { code: "invalid_parameter", message: "request body too large" })
      if (url.pathname === "/health") return send(res, 200, {})
      if (url.pathname === "/v1/policies" && req.method === "GET") {
        return send(res, 200, { result: policies.ids().map((id) => ({ id })) })
      }
      if (url.pathname.startsWith("/v1/policies/")) {
        const id = decodeURIComponent(url.pathname.slice("/v1/policies/".length))
        if (req.method === "DELETE") {
          return policies.remove(id)
            ? send(res, 200, {})
            : send(res, 404, { code: "resource_not_found", message: `storage_not_found_error: policy id "${id}"` })
        }
        if (req.method !== "PUT") return send(res, 405, { code: "invalid_parameter", message: "method not allowed" })
        try {
          policies.put(id, body)
          return send(res, 200, {})
        } catch (e) {
          if (e instanceof RegoSyntaxError || e instanceof RegoEvalError) {
            return send(res, 400, {
              code: "invalid_parameter",
              message: "error(s) occurred while compiling module(s)",
              errors: [{ code: "rego_parse_error", message: e.message }]
            })
          }
          throw e
        }
      }
      if (url.pathname.startsWith("/v1/data") && (req.method === "POST" || req.method === "GET")) {
        evaluations++
        let input: unknown
        try {
          input = req.method === "POST" && body.trim() !== "" ? (JSON.parse(body) as { input?: unknown }).input : undefined
        } catch {
          return send(res, 400, { code: "invalid_parameter", message: "body must be a JSON object with an input field" })
        }
        const path = url.pathname.slice("/v1/data".length).split("/").filter((p) => p !== "")
        try {
          const result = policies.evaluate(path, input)
          return send(res, 200, result === undefined ? {} : { result })
        } catch (e) {
          if (e instanceof RegoEvalError) return send(res, 500, { code: "internal_error", message: e.message })
          throw e
        }
      }
      return send(res, 404, { code: "resource_not_found", message: `${req.method} ${url.pathname}` })
    }

    const listening = yield* listenScoped((req, res) => {
      handle(req, res).catch((e: unknown) => send(res, 500, { code: "internal_error", message: String(e) }))
    }, options)
    return {
      url: listening.url,
      policies,
      setFault: (f) => {
        fault = f
      },
      evaluations: () => evaluations
    } satisfies DevOpa
  })
