/**
 * The investigation agent's REST contract (submit, poll, result), declared once: the agent implements it and the
 * analysis controller calls it with `HttpApiClient.make(AgentApi, { baseUrl })`. Paths and bodies follow the
 * agent's OpenAPI 1.5.7 so a controller written against the original works unchanged; every error is an RFC 7807
 * problem (`application/problem+json`).
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { AnalyzeAccepted, CancelSessionResponse, IncidentRequest, IncidentResponse, SessionSnapshot, SessionStatus } from "./domain/Incident.ts"
import { AccessRule } from "./EndpointAccess/Rule.ts"
import {
  BadRequestProblem,
  ConflictProblem,
  ForbiddenProblem,
  InternalProblem,
  NotFoundProblem,
  ServiceUnavailableProblem,
  UnauthorizedProblem
} from "./Problem.ts"

export { AnalyzeAccepted, CancelSessionResponse, IncidentRequest, IncidentResponse, SessionSnapshot, SessionStatus }

/** Where the agent serves the OpenAPI 3.1 document of this contract. */
export const AgentOpenApiPath = "/api/v1/openapi.json" as const

/** The caller of the REST API, as TokenReview named it. */
export class AgentCaller extends Context.Tag("@kubemend/core/AgentApi/AgentCaller")<
  AgentCaller,
  { readonly user: string; readonly groups: ReadonlyArray<string> }
>() {}

/**
 * A ServiceAccount bearer token checked against each endpoint's rule (core `EndpointAccess`): the analysis
 * controller and the gateway hold `agent-client` (`get`/`create` on `services/kubemend-agent`).
 */
export class AgentAuth extends HttpApiMiddleware.Tag<AgentAuth>()("@kubemend/core/AgentApi/AgentAuth", {
  failure: Schema.Union(UnauthorizedProblem, ForbiddenProblem, ServiceUnavailableProblem),
  provides: AgentCaller,
  security: { serviceAccount: HttpApiSecurity.bearer }
}) {}

const SessionPath = Schema.Struct({ session_id: Schema.String })

/** The session event stream: `text/event-stream` frames (`id`, `event`, `data` JSON). */
export const SessionEventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
)

export class IncidentGroup extends HttpApiGroup.make("incident")
  .add(
    HttpApiEndpoint.post("analyze", "/incident/analyze").annotate(AccessRule, AccessRule.write)
      .setPayload(IncidentRequest)
      .addSuccess(AnalyzeAccepted, { status: 202 })
      .annotate(OpenApi.Description, "Submit an investigation; poll the session, then fetch its result.")
  )
  .add(
    HttpApiEndpoint.get("sessionStatus", "/incident/session/:session_id").annotate(AccessRule, AccessRule.read)
      .setPath(SessionPath)
      .addSuccess(SessionStatus)
      .addError(NotFoundProblem)
  )
  .add(
    HttpApiEndpoint.get("sessionResult", "/incident/session/:session_id/result").annotate(AccessRule, AccessRule.read)
      .setPath(SessionPath)
      .addSuccess(IncidentResponse)
      .addError(NotFoundProblem)
      .addError(ConflictProblem)
      .annotate(OpenApi.Description, "The result of a completed (or failed) session; 409 while it is still running.")
  )
  .add(
    HttpApiEndpoint.get("sessionStream", "/incident/session/:session_id/stream").annotate(AccessRule, AccessRule.read)
      .setPath(SessionPath)
      .addSuccess(SessionEventStream)
      .addError(NotFoundProblem)
      .annotate(
        OpenApi.Description,
        "Server-sent events of the session: reasoning_delta, token_delta, tool_call_start, tool_call, tool_result, " +
          "error, complete, cancelled, alignment_verdict, interactive_state (an interactive session changed hands, " +
          "answered, failed or lapsed), session_ended (the last one). Each `id` is the event's sequence number: " +
          "`Last-Event-ID` resumes after it; a `: keepalive` comment goes out while nothing happens."
      )
  )
  .add(
    HttpApiEndpoint.post("cancelSession", "/incident/session/:session_id/cancel").annotate(AccessRule, AccessRule.write)
      .setPath(SessionPath)
      .addSuccess(CancelSessionResponse)
      .addError(NotFoundProblem)
      .addError(ConflictProblem)
  )
  .add(
    HttpApiEndpoint.get("sessionSnapshot", "/incident/session/:session_id/snapshot").annotate(AccessRule, AccessRule.read)
      .setPath(SessionPath)
      .addSuccess(SessionSnapshot)
      .addError(NotFoundProblem)
      .addError(ConflictProblem)
  )
  .middleware(AgentAuth)
{}

/** `GET /config`: the runtime configuration with secrets left out; served only in dev mode (404 otherwise). */
export class ConfigGroup extends HttpApiGroup.make("config")
  .add(
    HttpApiEndpoint.get("getConfig", "/config").annotate(AccessRule, AccessRule.read)
      .addSuccess(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      .addError(NotFoundProblem)
  )
  .middleware(AgentAuth)
{}

export class AgentApi extends HttpApi.make("agent")
  .add(IncidentGroup.prefix("/api/v1"))
  .add(ConfigGroup)
  .addError(BadRequestProblem)
  // Session lookups can fail on every session endpoint; declaring these once keeps handlers on one error mapping.
  .addError(NotFoundProblem)
  .addError(ConflictProblem)
  .addError(InternalProblem)
  .addError(ServiceUnavailableProblem)
  .annotateContext(
    OpenApi.annotations({
      title: "Kubemend investigation agent API",
      version: "1.0.0",
      description: "Session-based LLM root-cause analysis: submit an incident, poll the session, fetch the result."
    })
  )
{}
