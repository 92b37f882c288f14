/**
 * The storage service as the gateway, agent and controllers use it: a typed client generated from the shared
 * contract (`StorageApi`), with a deadline on every call and capped, jittered retries. Every method here is
 * idempotent (reads; audit writes carry client-assigned event ids; registrations are keyed by content), so all of
 * them retry when storage is unavailable. Failures come back as domain errors (`Wire.ts` maps them onward).
 *
 *   Storage.layer({ baseUrl: "https://storage:8080", tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" })
 *   Storage.layerMemory() // unit tests
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { duration } from "./Config.ts"
import {
  ContentIntegrityViolation,
  Conflict,
  DependencyUnavailable,
  ExportTooLarge,
  NotFound,
  ReconstructionIncomplete,
  Unauthenticated,
  ValidationError
} from "./Errors.ts"
import type {
  ActionTypeCreateRequest,
  ActionTypeCreateResponse,
  ActionTypeListResponse,
  AuditEventInput,
  AuditEventsQuery,
  AuditEventsQueryResponse,
  CreateWorkflowRequest,
  DiscoveryQuery,
  EffectivenessScoreResponse,
  NotificationAudit,
  StructuredDescription,
  ReconstructionResponse,
  RemediationHistoryContext,
  RemediationHistoryQuery,
  RemediationWorkflow,
  SignalContext,
  VerifyChainResponse,
  WorkflowDiscoveryResponse,
  WorkflowEffectiveness,
  WorkflowListQuery
} from "./StorageApi.ts"
import { tokenSource } from "./ServiceToken.ts"
import { StorageApi } from "./StorageApi.ts"
import { makeMemory, type MemorySeed } from "./Storage/Memory.ts"

export type StorageError =
  | NotFound
  | ValidationError
  | Conflict
  | ContentIntegrityViolation
  | ReconstructionIncomplete
  | ExportTooLarge
  | Unauthenticated
  | DependencyUnavailable

export interface WorkflowList {
  readonly workflows: ReadonlyArray<RemediationWorkflow>
  readonly limit: number
  readonly offset: number
  readonly total: number
}

export interface StorageService {
  /** Writes 1–1000 events in one chained batch; ids are assigned here when absent, so a retry never duplicates. */
  readonly writeEvents: (
    events: ReadonlyArray<AuditEventInput>
  ) => Effect.Effect<{ readonly eventIds: ReadonlyArray<string>; readonly queued: boolean }, StorageError>
  readonly queryEvents: (query: AuditEventsQuery) => Effect.Effect<AuditEventsQueryResponse, StorageError>
  readonly verifyChain: (correlationId: string) => Effect.Effect<VerifyChainResponse, StorageError>
  readonly reconstruct: (correlationId: string) => Effect.Effect<ReconstructionResponse, StorageError>
  readonly effectiveness: (correlationId: string) => Effect.Effect<EffectivenessScoreResponse, StorageError>
  readonly workflowEffectiveness: (workflowId: string, namespace?: string) => Effect.Effect<WorkflowEffectiveness, StorageError>
  readonly remediationHistory: (query: RemediationHistoryQuery) => Effect.Effect<RemediationHistoryContext, StorageError>
  readonly listWorkflows: (query: WorkflowListQuery) => Effect.Effect<WorkflowList, StorageError>
  /** With a context, a workflow that does not match it is NotFound (discovery step 3). */
  readonly getWorkflow: (workflowId: string, context?: SignalContext) => Effect.Effect<RemediationWorkflow, StorageError>
  readonly registerWorkflow: (
    request: CreateWorkflowRequest
  ) => Effect.Effect<{ readonly workflow: RemediationWorkflow; readonly created: boolean }, StorageError>
  readonly listActions: (query: DiscoveryQuery) => Effect.Effect<ActionTypeListResponse, StorageError>
  readonly listWorkflowsByAction: (actionType: string, query: DiscoveryQuery) => Effect.Effect<WorkflowDiscoveryResponse, StorageError>
  readonly registerActionType: (request: ActionTypeCreateRequest) => Effect.Effect<ActionTypeCreateResponse, StorageError>
  /** The workflow is no longer offered (its resource was deleted); NotFound when the id is unknown. */
  readonly disableWorkflow: (workflowId: string, reason: string, by?: string) => Effect.Effect<RemediationWorkflow, StorageError>
  readonly updateActionType: (name: string, description: StructuredDescription, by?: string) => Effect.Effect<void, StorageError>
  /** Conflict while active workflows still use the action type; NotFound when it is unknown. */
  readonly disableActionType: (name: string, by: string) => Effect.Effect<void, StorageError>
  /** One delivery record in the notification audit; a second record with the same `notification_id` is a Conflict. */
  readonly recordNotification: (record: NotificationAudit) => Effect.Effect<void, StorageError>
}

export interface StorageClientOptions {
  /** `https://storage.kubemend-system:8080` (no `/api/v1`). */
  readonly baseUrl: string
  /** A fixed ServiceAccount token, or… */
  readonly token?: Redacted.Redacted
  /** …a projected token file, re-read every minute (kubelet rotates it). */
  readonly tokenFile?: string
  /** Deadline of one attempt (default 10 s). */
  readonly timeout?: Duration.DurationInput
  /** Retries after the first attempt when storage is unavailable (default 3). */
  readonly retries?: number
}

const problemStatus = (u: unknown): Option.Option<{ status: number; type: string; detail: string | undefined }> =>
  typeof u === "object" && u !== null && typeof (u as { status?: unknown }).status === "number" && typeof (u as { type?: unknown }).type === "string"
    ? Option.some({ status: (u as { status: number }).status, type: (u as { type: string }).type, detail: (u as { detail?: string }).detail })
    : Option.none()

/** Problem bodies and transport failures to domain errors. */
export const toStorageError = (u: unknown): StorageError =>
  Option.match(problemStatus(u), {
    onNone: () => new DependencyUnavailable({ dependency: "storage", detail: "the storage service could not be reached" }),
    onSome: ({ detail, status, type }) => {
      const slug = type.split("/").pop() ?? ""
      const d = detail ?? slug
      if (status === 400) {
        return slug === "reconstruction-incomplete"
          ? new ReconstructionIncomplete({ completeness: 0, detail: d })
          : new ValidationError({ detail: d })
      }
      if (status === 401 || status === 403) return new Unauthenticated({ reason: "token_review_failed", detail: d })
      if (status === 404) return new NotFound({ resource: "storage resource", id: "", detail: d })
      if (status === 409) {
        return slug === "content-integrity-violation"
          ? new ContentIntegrityViolation({ name: "", version: "", detail: d })
          : new Conflict({ detail: d })
      }
      if (status === 413) return new ExportTooLarge({ limit: 0, detail: d })
      return new DependencyUnavailable({ dependency: "storage", detail: d })
    }
  })

export const make = (options: StorageClientOptions) =>
  Effect.gen(function* () {
    const token = yield* tokenSource(options)
    const http = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequestEffect((request) => Effect.map(token, (t) => HttpClientRequest.bearerToken(request, t)))
    )
    const api = yield* HttpApiClient.makeWith(StorageApi, { httpClient: http, baseUrl: options.baseUrl })
    const timeout = Duration.decode(options.timeout ?? "10 seconds")
    const retry = Schedule.exponential("100 millis").pipe(
      Schedule.union(Schedule.spaced("2 seconds")),
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(options.retries ?? 3))
    )
    const call = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, StorageError, R> =>
      effect.pipe(
        Effect.mapError(toStorageError),
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new DependencyUnavailable({ dependency: "storage", detail: `${name} timed out` }) }),
        Effect.retry({ schedule: retry, while: (e) => e._tag === "DependencyUnavailable" }),
        Effect.withSpan(`Storage.${name}`)
      )

    const service: StorageService = {
      writeEvents: (events) => {
        const withIds = events.map((e) => (e.event_id === undefined ? { ...e, event_id: randomUUID() } : e))
        return call("writeEvents", api.audit.createAuditEventsBatch({ payload: withIds })).pipe(
          Effect.map((r) => ({ eventIds: r.event_ids ?? withIds.map((e) => e.event_id!), queued: "status" in r }))
        )
      },
      queryEvents: (urlParams) => call("queryEvents", api.audit.queryAuditEvents({ urlParams })),
      verifyChain: (correlation_id) => call("verifyChain", api.compliance.verifyAuditChain({ payload: { correlation_id } })),
      reconstruct: (correlation_id) => call("reconstruct", api.compliance.reconstructRemediationRequest({ path: { correlation_id } })),
      effectiveness: (correlation_id) => call("effectiveness", api.compliance.getEffectivenessScore({ path: { correlation_id } })),
      workflowEffectiveness: (workflow_id, namespace) =>
        call(
          "workflowEffectiveness",
          api.compliance.getWorkflowEffectiveness({ urlParams: { workflow_id, ...(namespace === undefined ? {} : { namespace }) } })
        ),
      remediationHistory: (urlParams) => call("remediationHistory", api.compliance.getRemediationHistoryContext({ urlParams })),
      listWorkflows: (urlParams) => call("listWorkflows", api.workflows.listWorkflows({ urlParams })),
      getWorkflow: (workflow_id, context = {}) => call("getWorkflow", api.workflows.getWorkflowByID({ path: { workflow_id }, urlParams: context })),
      registerWorkflow: (payload) =>
        call("registerWorkflow", api.workflows.createWorkflow({ payload, withResponse: true })).pipe(
          Effect.map(([workflow, response]) => ({ workflow: { ...workflow }, created: response.status === 201 }))
        ),
      listActions: (urlParams) => call("listActions", api.workflows.listAvailableActions({ urlParams })),
      listWorkflowsByAction: (action_type, urlParams) =>
        call("listWorkflowsByAction", api.workflows.listWorkflowsByActionType({ path: { action_type }, urlParams })),
      registerActionType: (payload) => call("registerActionType", api.actionTypes.createActionType({ payload })).pipe(Effect.map((r) => ({ ...r }))),
      disableWorkflow: (workflow_id, reason, by) =>
        call("disableWorkflow", api.workflows.disableWorkflow({ path: { workflow_id }, payload: { reason, ...(by === undefined ? {} : { updatedBy: by }) } }))
          .pipe(Effect.map((w) => ({ ...w }))),
      updateActionType: (name, description, by) =>
        call("updateActionType", api.actionTypes.updateActionType({ path: { name }, payload: { description, ...(by === undefined ? {} : { updatedBy: by }) } }))
          .pipe(Effect.asVoid),
      disableActionType: (name, disabledBy) =>
        call("disableActionType", api.actionTypes.disableActionType({ path: { name }, payload: { disabledBy } })).pipe(Effect.asVoid),
      recordNotification: (payload) => call("recordNotification", api.audit.createNotificationAudit({ payload })).pipe(Effect.asVoid)
    }
    return service
  })

export class Storage extends Context.Tag("@kubemend/core/Storage")<Storage, StorageService>() {
  /** The live client over fetch. */
  static readonly layer = (options: StorageClientOptions) => Layer.effect(Storage, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

  /** From the caller's config: `storage.url`, `storage.tokenFile` or `storage.token`, `storage.timeout`, `storage.retries`. */
  static readonly layerConfig = Layer.unwrapEffect(
    Config.nested(
      Config.all({
        url: Config.string("url"),
        token: Config.option(Config.redacted("token")),
        tokenFile: Config.option(Config.string("tokenFile")),
        timeout: duration("timeout").pipe(Config.withDefault(Duration.seconds(10))),
        retries: Config.integer("retries").pipe(Config.withDefault(3))
      }),
      "storage"
    ).pipe(
      Effect.map((c) =>
        Storage.layer({
          baseUrl: c.url,
          timeout: c.timeout,
          retries: c.retries,
          ...(Option.isSome(c.token) ? { token: c.token.value } : {}),
          ...(Option.isSome(c.tokenFile) ? { tokenFile: c.tokenFile.value } : {})
        })
      )
    )
  )

  /** In memory, for unit tests of callers; the same validation, ids and idempotency rules as the service. */
  static readonly layerMemory = (seed: MemorySeed = {}) => Layer.effect(Storage, makeMemory(seed))
}

export type { MemorySeed }
