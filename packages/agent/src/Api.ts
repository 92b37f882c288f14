/**
 * The agent's API server: the REST contract (`AgentApi` in core) with its handlers, the OpenAPI 3.1 document at
 * `/api/v1/openapi.json`, the interactive MCP route, and one rule for every failure: an RFC 7807 problem body.
 * Every REST endpoint is for the platform's own ServiceAccounts (`Http/Auth.ts`).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Layer } from "effect"
import { AgentApi, AgentOpenApiPath } from "@kubemend/core/AgentApi"
import { bodyLimit, problemMiddleware } from "@kubemend/core/HttpProblems"
import { apiHeaders } from "@kubemend/core/ApiHeaders"
import { drainGuard } from "@kubemend/core/Servers"
import { AgentAuthLive } from "./Http/Auth.ts"
import { ConfigHttpLive } from "./Http/Config.ts"
import { IncidentHttpLive } from "./Http/Incident.ts"

export { AgentApi, AgentOpenApiPath }

/** Largest request body the REST API reads (an IncidentRequest is a few KiB). */
const maxBodyBytes = 1024 * 1024

export const ApiLive = HttpApiBuilder.api(AgentApi).pipe(
  Layer.provide(IncidentHttpLive),
  Layer.provide(ConfigHttpLive),
  Layer.provide(AgentAuthLive)
)

/** Serves the API (plus whatever routes `extra` adds to `HttpApiBuilder.Router`) on the current HttpServer. */
export const serve = <E, R>(extra: Layer.Layer<never, E, R>) =>
  HttpApiBuilder.serve((app) => apiHeaders(drainGuard(bodyLimit(maxBodyBytes)(app)))).pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: AgentOpenApiPath })),
    Layer.provide(problemMiddleware(AgentApi, maxBodyBytes)),
    Layer.provide(extra),
    Layer.provide(ApiLive)
  )
