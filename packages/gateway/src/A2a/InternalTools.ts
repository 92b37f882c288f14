/**
 * The A2A agent's internal tools (document 1, not on the MCP bridge, SAR-gated like every tool): read the cluster
 * (`cluster_get`, `cluster_list`, `cluster_list_events`; Secret values redacted), look for a duplicate
 * RemediationRequest (`svc_check_existing_remediation`) and create one (`svc_remediate`, `api_version` required
 * with namespace/kind/name). They are `ToolDef`s, so they run through the bridge's own call pipeline.
 */
import { Effect, Schema } from "effect"
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import { K8s, type K8sAmbiguousKind, type K8sNotFound, type K8sUnavailable, type K8sUnknownKind, type KubeObject } from "@kubemend/core/K8s"
import { redactSecret } from "@kubemend/core/K8s/Redact"
import { toolTable } from "@kubemend/core/Personas"
import { ToolError } from "@kubemend/core/ToolError"
import { GatewayAudit } from "../GatewayAudit.ts"
import { defineTool, type ToolContext, type ToolDef } from "../Mcp/Tool.ts"
import { ApiVersion, compact, KindName, NamespaceName, optional, record, ResourceName, specOf, statusOf, str, Text } from "../Tools/Common.ts"
import { requestOnTarget } from "../Tools/Target.ts"

/** The name a tool of the A2A agent is reviewed and called under: `svc_` only where the persona table says so. */
export const agentToolName = (prefix: string, name: string): string => {
  const grant = toolTable.find((t) => t.name === name && t.surface === "a2a") ?? toolTable.find((t) => t.name === name)
  return grant?.prefixed === false || prefix === "" ? name : `${prefix}_${name}`
}

const clusterFailure = (what: string) => (e: K8sNotFound | K8sAmbiguousKind | K8sUnknownKind | K8sUnavailable) => {
  switch (e._tag) {
    case "K8sNotFound":
      return new ToolError({ message: `${what} not found`, code: "not_found" })
    case "K8sAmbiguousKind":
      return new ToolError({ message: `kind ${e.kind} is served by several API groups (${e.groups.join(", ")}); give api_version`, code: "invalid_arguments" })
    case "K8sUnknownKind":
      return new ToolError({ message: `the cluster serves no kind ${e.kind}`, code: "invalid_arguments" })
    default:
      return new ToolError({ message: "the cluster API is unavailable, please retry", code: "cluster_unavailable" })
  }
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

/** What the model reads of an object: no managed fields or last-applied copies, Secret values redacted again. */
export const slim = (o: KubeObject): KubeObject => {
  const { managedFields: _m, annotations, ...metadata } = o.metadata
  const kept = annotations === undefined ? undefined : Object.fromEntries(Object.entries(annotations).filter(([k]) => k !== lastApplied))
  return redactSecret({ ...o, metadata: { ...metadata, ...(kept === undefined ? {} : { annotations: kept }) } })
}

const Target = {
  namespace: NamespaceName,
  kind: KindName,
  name: ResourceName
}

const matchesTarget = (rr: KubeObject, t: { namespace?: string | undefined; kind: string; name: string }) => {
  const target = record(specOf(rr).targetResource)
  return str(target.name) === t.name && (str(target.kind) ?? "").toLowerCase() === t.kind.toLowerCase() &&
    (t.namespace === undefined || str(target.namespace) === t.namespace)
}

const rrSummary = (rr: KubeObject) => ({
  id: rr.metadata.name,
  phase: str(statusOf(rr).overallPhase) ?? "Pending",
  created_at: rr.metadata.creationTimestamp
})

export interface NewRemediation {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
  readonly signalName: string
  readonly severity: string
  readonly signalType: string
  readonly description?: string | undefined
  readonly signalLabels?: Readonly<Record<string, string>>
}

/** Creates the RR for a target, or answers the request already in progress on it, whichever door made it (`rr.deduplicated`). */
export const createRemediation = Effect.gen(function* () {
  const onTarget = yield* requestOnTarget
  return (r: NewRemediation, ctx: ToolContext) =>
    Effect.map(
      onTarget({
        door: "a2a",
        target: compact({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, namespace: r.namespace }),
        signalName: r.signalName,
        severity: r.severity,
        signalType: r.signalType,
        description: r.description ?? `requested by ${ctx.caller.principal.user} through the A2A agent`,
        signalLabels: r.signalLabels
      }, ctx),
      (found) =>
        found.existing === undefined
          ? { status: "created", rr_id: found.name, message: `remediation ${found.name} created for ${r.kind}/${r.name}` }
          : {
            status: "exists",
            rr_id: found.name,
            phase: rrSummary(found.existing).phase,
            message: `remediation ${found.name} already handles this target`
          }
    )
})

export const internalTools: Effect.Effect<ReadonlyArray<ToolDef>, never, K8s | GatewayAudit> = Effect.gen(function* () {
  const k8s = yield* K8s
  const create = yield* createRemediation

  return [
    defineTool({
      name: "cluster_get",
      description: "Get one namespaced Kubernetes resource by kind, name and namespace (api_version disambiguates). Secret values are redacted.",
      input: Schema.Struct({ ...Target, api_version: optional(ApiVersion) }),
      run: (input) =>
        k8s.getResource({
          kind: input.kind,
          name: input.name,
          namespace: input.namespace,
          ...(input.api_version === undefined ? {} : { apiVersion: input.api_version })
        })
          .pipe(Effect.map(slim), Effect.mapError(clusterFailure(`${input.kind} ${input.namespace}/${input.name}`)))
    }),
    defineTool({
      name: "cluster_list",
      description: "List Kubernetes resources of one kind in a namespace, optionally by label selector. Secret values are redacted.",
      input: Schema.Struct({ namespace: NamespaceName, kind: KindName, api_version: optional(ApiVersion), label_selector: optional(Text(1024)) }),
      listField: "items",
      run: (input) =>
        k8s.listResources({
          kind: input.kind,
          namespace: input.namespace,
          ...(input.api_version === undefined ? {} : { apiVersion: input.api_version }),
          ...(input.label_selector === undefined || input.label_selector === "" ? {} : { labelSelector: input.label_selector })
        }).pipe(
          Effect.map((list) => ({ items: list.items.map((o) => slim({ ...o, kind: o.kind ?? input.kind })), count: list.items.length })),
          Effect.mapError(clusterFailure(`${input.kind} in ${input.namespace}`))
        )
    }),
    defineTool({
      name: "cluster_list_events",
      description: "List Kubernetes events in a namespace, optionally filtered by reason and by the involved object's kind and name.",
      input: Schema.Struct({ namespace: NamespaceName, reason: optional(Text(128)), kind: optional(KindName), name: optional(ResourceName) }),
      listField: "events",
      run: (input) =>
        k8s.listEvents({
          namespace: input.namespace,
          ...(input.reason === undefined ? {} : { reason: input.reason }),
          ...(input.kind === undefined ? {} : { involvedObjectKind: input.kind }),
          ...(input.name === undefined ? {} : { involvedObjectName: input.name })
        }).pipe(
          Effect.map((events) => {
            const views = events.map((e) => {
              const o = e as Record<string, unknown>
              const involved = record(o.involvedObject)
              return compact({
                type: str(o.type),
                reason: str(o.reason),
                message: str(o.message),
                count: o.count,
                object: `${str(involved.kind) ?? ""}/${str(involved.name) ?? ""}`,
                last_timestamp: str(o.lastTimestamp) ?? str(o.eventTime) ?? e.metadata.creationTimestamp
              })
            })
            return { events: views, count: views.length }
          }),
          Effect.mapError(clusterFailure(`events in ${input.namespace}`))
        )
    }),
    defineTool({
      name: "check_existing_remediation",
      description: "Check whether an active remediation request already handles a target (namespace, kind, name).",
      input: Schema.Struct({ namespace: optional(NamespaceName), kind: KindName, name: ResourceName }),
      run: (input) =>
        k8s.listCr("remediationrequests").pipe(
          Effect.mapError(clusterFailure("remediation requests")),
          Effect.map((list) => {
            const active = list.items
              .filter((rr) => matchesTarget(rr, input) && !isTerminalPhase(str(statusOf(rr).overallPhase) ?? "Pending"))
              .map(rrSummary)
            return { exists: active.length > 0, remediations: active, count: active.length }
          })
        )
    }),
    defineTool({
      name: "remediate",
      description:
        "Create a remediation request for a target (api_version, kind, name, namespace for namespaced kinds, optional description), or start the autonomous investigation of an existing one (rr_id).",
      input: Schema.Struct({
        rr_id: optional(ResourceName),
        api_version: optional(ApiVersion),
        namespace: optional(NamespaceName),
        kind: optional(KindName),
        name: optional(ResourceName),
        description: optional(Text(4096))
      }),
      run: (input, ctx) =>
        Effect.gen(function* () {
          if (input.rr_id !== undefined) {
            const rr = yield* k8s.getCr("remediationrequests", input.rr_id).pipe(Effect.mapError(clusterFailure(`remediation request ${input.rr_id}`)))
            const phase = str(statusOf(rr).overallPhase) ?? "Pending"
            if (isTerminalPhase(phase)) return yield* new ToolError({ message: `remediation ${input.rr_id} is already ${phase}`, code: "terminal_phase" })
            const started = record(
              yield* ctx.agent.call("investigate", { rr_id: input.rr_id, action: "start_autonomous" }, {
                user: ctx.caller.principal.user,
                groups: ctx.caller.principal.groups,
                token: ctx.caller.token
              })
            )
            return { ...started, status: str(started.status) ?? "started", rr_id: input.rr_id }
          }
          if (input.kind === undefined || input.name === undefined) {
            return yield* new ToolError({ message: "give rr_id, or api_version, kind, name (and namespace) of the target", code: "invalid_arguments" })
          }
          if (input.api_version === undefined) {
            return yield* new ToolError({ message: "api_version is required with namespace, kind and name", code: "invalid_arguments" })
          }
          return yield* create({
            apiVersion: input.api_version,
            kind: input.kind,
            name: input.name,
            namespace: input.namespace,
            signalName: "A2ARemediationRequest",
            severity: "unknown",
            signalType: "a2a",
            description: input.description
          }, ctx)
        })
    })
  ]
})
