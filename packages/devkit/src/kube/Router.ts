/** node:http request handling: body, routing, request log, injected faults, and Status replies for failures. */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { ResourceApi } from "./Api.ts"
import { apiGroupDocument, apiGroupList, apiResourceList, apiVersions, versionInfo } from "./Discovery.ts"
import type { Faults, RequestAttributes } from "./Faults.ts"
import { acceptsJson, openApiFor, type SchemaOf } from "./OpenApi.ts"
import type { ResourceRegistry } from "./Resources.ts"
import type { Tokens } from "./Reviews.ts"
import { parseRoute, type Route, verbOf } from "./Route.ts"
import { ApiError, methodNotAllowed } from "./Status.ts"
import type { PodLogAnswer, PodLogQuery } from "@kubemend/core/K8s/PodLogs"
import { logQuery, writeLog } from "./Logs.ts"

/** One request as the server saw it, for tests that check who called what. */
export interface RecordedRequest extends RequestAttributes {
  readonly method: string
  readonly path: string
  readonly query: string
  /** The bearer token sent, if any (any token or none is accepted). */
  readonly token?: string
  /** The identity of a registered token (`system:serviceaccount:ns:name`). */
  readonly user?: string
}

export interface RouterDeps {
  readonly registry: ResourceRegistry
  readonly api: ResourceApi
  readonly faults: Faults
  readonly tokens: Tokens
  readonly record: (request: RecordedRequest) => void
  readonly serverAddress: () => string
  /** A stored CRD's schema of a kind, for the OpenAPI documents. */
  readonly schemaOf?: SchemaOf
  /** Container logs (`pods/<name>/log`). */
  readonly podLog: (namespace: string, name: string, query: PodLogQuery) => PodLogAnswer
}

const notFoundError = () => new ApiError(404, "NotFound", "the server could not find the requested resource")

const attributesOf = (route: Route, method: string, watch: boolean): RequestAttributes =>
  route.type === "resource"
    ? {
      verb: verbOf(method, route.name !== undefined, watch),
      group: route.group,
      resource: route.plural,
      ...(route.subresource === undefined ? {} : { subresource: route.subresource }),
      ...(route.namespace === undefined ? {} : { namespace: route.namespace }),
      ...(route.name === undefined ? {} : { name: route.name })
    }
    : { verb: method === "GET" ? "get" : method.toLowerCase() }

const writeJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers })
  res.end(text)
}

const discovery = (deps: RouterDeps, route: Route): unknown => {
  switch (route.type) {
    case "version":
      return versionInfo
    case "api":
      return apiVersions(deps.serverAddress())
    case "apis":
      return apiGroupList(deps.registry)
    case "group":
      return apiGroupDocument(deps.registry, route.group)
    case "resources":
      return apiResourceList(deps.registry, route.group, route.version)
    default:
      return undefined
  }
}

const respond = async (deps: RouterDeps, req: IncomingMessage, res: ServerResponse, raw: string) => {
  const url = new URL(req.url ?? "/", "http://devkube")
  const method = req.method ?? "GET"
  const route = parseRoute(url.pathname, (g, v, p) => deps.registry.find(g, v, p) !== undefined)
  const watchParam = url.searchParams.get("watch")
  const watch = watchParam === "true" || watchParam === "1" || (route.type === "resource" && route.watchPath)
  const attributes = attributesOf(route, method, watch)
  const auth = req.headers.authorization ?? ""
  const token = auth.startsWith("Bearer ") ? auth.slice(7).trim() : undefined
  const user = token === undefined ? undefined : deps.tokens.lookup(token)?.username
  deps.record({
    ...attributes,
    method,
    path: url.pathname,
    query: url.search,
    ...(token === undefined ? {} : { token }),
    ...(user === undefined ? {} : { user })
  })
  try {
    const delay = deps.faults.latencyFor(attributes)
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
    const failure = deps.faults.failureFor(attributes)
    if (failure !== undefined) throw failure
    if (route.type === "resource") {
      const rt = deps.registry.find(route.group, route.version, route.plural)
      if (rt === undefined) throw notFoundError()
      if (rt.group === "" && rt.plural === "pods" && route.subresource === "log" && route.namespace !== undefined && route.name !== undefined) {
        if (method !== "GET") throw methodNotAllowed(method)
        return writeLog(res, deps.podLog(route.namespace, route.name, logQuery(url.searchParams)))
      }
      const reply = deps.api.handle(rt, route, attributes.verb, url.searchParams, req, res, raw)
      if (reply !== undefined) writeJson(res, reply.status, reply.body)
      return
    }
    if (["/healthz", "/livez", "/readyz"].includes(url.pathname)) {
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok")
      return
    }
    if (url.pathname === "/openapi/v2" || url.pathname.startsWith("/openapi/v3")) {
      const spec = openApiFor(deps.registry, deps.schemaOf ?? (() => undefined), url.pathname)
      if (spec === undefined) throw notFoundError()
      if (url.pathname === "/openapi/v2" && !acceptsJson(req.headers.accept)) {
        throw new ApiError(406, "NotAcceptable", "only application/json is served at /openapi/v2")
      }
      writeJson(res, 200, spec)
      return
    }
    const doc = discovery(deps, route)
    if (doc === undefined) throw notFoundError()
    if (method !== "GET") throw methodNotAllowed(method)
    writeJson(res, 200, doc)
  } catch (e) {
    const error = e instanceof ApiError ? e : new ApiError(500, "InternalError", `internal error: ${String(e)}`)
    if (res.headersSent) {
      res.end()
      return
    }
    const retry = error.details?.retryAfterSeconds
    writeJson(res, error.code, error.toStatus(), retry === undefined ? {} : { "Retry-After": String(retry) })
  }
}

export const requestHandler = (deps: RouterDeps) => (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => void respond(deps, req, res, Buffer.concat(chunks).toString("utf8")))
}
