/**
 * Read-only cluster tools: `cluster_get`, `cluster_list`, `cluster_list_events` and `resolve_owner`. A kind served
 * by several API groups without `api_version` gets a correction naming the groups; the model omitting it again
 * and again escalates the investigation to a human (`rca_incomplete`).
 */
import { Effect, Schema } from "effect"
import { K8s, type K8sAmbiguousKind, type KubeObject } from "@kubemend/core/K8s"
import { AgentConfig } from "../AgentConfig.ts"
import type { RunState, TargetRef } from "./Run.ts"
import { failed, ok, opt, tool, type ToolResult } from "./ToolKit.ts"

const Kind = Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9]{0,62}$/))
const Name = Schema.String.pipe(Schema.pattern(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/))
const ApiVersion = Schema.String.pipe(Schema.pattern(/^([a-z0-9.-]+\/)?v[0-9a-z]+$/))
const Text = Schema.String.pipe(Schema.maxLength(512))

const maxListItems = 50
const maxOwnerDepth = 5

/** Drops what costs tokens and says nothing about the incident. */
export const trim = (o: KubeObject): KubeObject => {
  const { managedFields: _m, ...metadata } = o.metadata as KubeObject["metadata"] & { managedFields?: unknown }
  const annotations = metadata.annotations === undefined
    ? undefined
    : Object.fromEntries(
      Object.entries(metadata.annotations).filter(([k]) => k !== "kubectl.kubernetes.io/last-applied-configuration")
    )
  return { ...o, metadata: annotations === undefined ? metadata : { ...metadata, annotations } }
}

/** The resource the incident names (kind, name, namespace compared as the API server does). */
export const isIncidentResource = (run: RunState, t: TargetRef) => {
  const r = run.session.request
  return t.kind.toLowerCase() === r.resource_kind.toLowerCase() && t.name === r.resource_name &&
    (t.namespace ?? r.resource_namespace) === r.resource_namespace
}

export const make = Effect.gen(function* () {
  const k8s = yield* K8s
  const config = yield* AgentConfig

  const namespaceOf = (run: RunState, namespace: string | undefined) => namespace ?? run.session.request.resource_namespace

  /** The correction the model gets for an ambiguous kind; past the allowance the run escalates. */
  const ambiguous = (run: RunState, e: K8sAmbiguousKind): ToolResult => {
    run.ambiguousOmissions++
    const message = `kind ${e.kind} is served by more than one API group (${e.groups.join(", ")}); ` +
      `call again with api_version (for example "${e.groups[0] === "core" ? "v1" : `${e.groups[0]}/v1`}") or api_group`
    if (run.ambiguousOmissions > config.ambiguousKindRetries) {
      return {
        ok: false,
        content: { error: message },
        escalate: {
          reason: "rca_incomplete",
          summary: `The model repeatedly omitted api_version for the ambiguous kind ${e.kind} (${e.groups.join(", ")}); ` +
            "the investigation needs a human."
        }
      }
    }
    return failed(message)
  }

  const ref = (a: { kind: string; namespace?: string; api_version?: string; api_group?: string }, run: RunState) => ({
    kind: a.kind,
    namespace: namespaceOf(run, a.namespace),
    ...(a.api_version === undefined ? {} : { apiVersion: a.api_version }),
    ...(a.api_group === undefined ? {} : { apiGroup: a.api_group })
  })

  const describe = (e: { _tag: string }, what: string) => {
    switch (e._tag) {
      case "K8sNotFound":
        return failed(`${what} not found`)
      case "K8sUnknownKind":
        return failed(`${what}: the cluster does not serve this kind`)
      default:
        return failed(`${what}: the cluster API is unavailable (${(e as { message?: string }).message ?? e._tag})`)
    }
  }

  const clusterGet = tool(
    "cluster_get",
    "Get one Kubernetes resource by kind and name (Secret data is redacted). Use api_version for kinds served by several API groups.",
    Schema.Struct({ kind: Kind, name: Name, namespace: opt(Name), api_version: opt(ApiVersion), api_group: opt(Text) }),
    (a, run) =>
      k8s.getResource({ ...ref(a, run), name: a.name }).pipe(
        Effect.map((o) => ok(trim(o))),
        Effect.catchAll((e) => Effect.succeed(e._tag === "K8sAmbiguousKind" ? ambiguous(run, e) : describe(e, `${a.kind} ${a.name}`)))
      )
  )

  const clusterList = tool(
    "cluster_list",
    `List Kubernetes resources of one kind in a namespace, optionally filtered by label or field selector (at most ${maxListItems}).`,
    Schema.Struct({
      kind: Kind,
      namespace: opt(Name),
      api_version: opt(ApiVersion),
      api_group: opt(Text),
      label_selector: opt(Text),
      field_selector: opt(Text)
    }),
    (a, run) =>
      k8s.listResources({
        ...ref(a, run),
        ...(a.label_selector === undefined ? {} : { labelSelector: a.label_selector }),
        ...(a.field_selector === undefined ? {} : { fieldSelector: a.field_selector })
      }).pipe(
        Effect.map((l) => ok({ count: l.items.length, items: l.items.slice(0, maxListItems).map(trim) })),
        Effect.catchAll((e) => Effect.succeed(e._tag === "K8sAmbiguousKind" ? ambiguous(run, e) : describe(e, `${a.kind} list`)))
      )
  )

  const listEvents = tool(
    "cluster_list_events",
    "List Kubernetes events in a namespace, optionally for one object (kind and name) or one reason.",
    Schema.Struct({
      namespace: opt(Name),
      involved_object_kind: opt(Kind),
      involved_object_name: opt(Name),
      reason: opt(Text)
    }),
    (a, run) =>
      k8s.listEvents({
        namespace: namespaceOf(run, a.namespace),
        ...(a.involved_object_kind === undefined ? {} : { involvedObjectKind: a.involved_object_kind }),
        ...(a.involved_object_name === undefined ? {} : { involvedObjectName: a.involved_object_name }),
        ...(a.reason === undefined ? {} : { reason: a.reason })
      }).pipe(
        Effect.map((events) =>
          ok({
            count: events.length,
            events: events.slice(-maxListItems).map((e) => {
              const ev = e as KubeObject & Record<string, unknown>
              return {
                type: ev["type"],
                reason: ev["reason"],
                message: ev["message"],
                count: ev["count"],
                involvedObject: ev["involvedObject"],
                lastTimestamp: ev["lastTimestamp"] ?? ev["eventTime"]
              }
            })
          })
        ),
        Effect.catchAll((e) => Effect.succeed(describe(e, "events")))
      )
  )

  /** Follows controller owner references up to the top (Pod -> ReplicaSet -> Deployment). */
  const ownerChain = (start: TargetRef) =>
    Effect.gen(function* () {
      const chain: Array<TargetRef> = [start]
      let current = start
      for (let depth = 0; depth < maxOwnerDepth; depth++) {
        const object = yield* k8s.getResource({
          kind: current.kind,
          name: current.name,
          namespace: current.namespace ?? "default",
          ...(current.apiVersion === undefined || current.apiVersion === "" ? {} : { apiVersion: current.apiVersion })
        })
        if (depth === 0 && object.apiVersion !== undefined) chain[0] = { ...current, apiVersion: object.apiVersion }
        const owners = (object.metadata.ownerReferences ?? []) as ReadonlyArray<Record<string, unknown>>
        const owner = owners.find((o) => o["controller"] === true) ?? owners[0]
        if (owner === undefined || typeof owner["kind"] !== "string" || typeof owner["name"] !== "string") break
        current = {
          kind: owner["kind"],
          name: owner["name"],
          ...(current.namespace === undefined ? {} : { namespace: current.namespace }),
          ...(typeof owner["apiVersion"] === "string" ? { apiVersion: owner["apiVersion"] } : {})
        }
        chain.push(current)
      }
      return chain
    })

  const resolveOwner = tool(
    "resolve_owner",
    "Resolve the controller that owns a resource (for example Pod -> ReplicaSet -> Deployment); the top owner is the remediation target.",
    Schema.Struct({ kind: Kind, name: Name, namespace: opt(Name), api_version: opt(ApiVersion) }),
    (a, run) =>
      ownerChain({
        kind: a.kind,
        name: a.name,
        namespace: namespaceOf(run, a.namespace),
        ...(a.api_version === undefined ? {} : { apiVersion: a.api_version })
      }).pipe(
        Effect.map((chain) => {
          const top = chain[chain.length - 1]!
          // Only the incident's own resource decides the remediation target; a lookup of a neighbour (a database pod
          // the service calls) must not redirect discovery to the neighbour's workflows.
          if (isIncidentResource(run, chain[0]!)) {
            run.ownerChain = chain
            run.remediationTarget = top
          }
          return ok({ owner_chain: chain, remediation_target: top })
        }),
        Effect.catchAll((e) => Effect.succeed(e._tag === "K8sAmbiguousKind" ? ambiguous(run, e) : describe(e, `${a.kind} ${a.name}`)))
      )
  )

  return { tools: [clusterGet, clusterList, listEvents, resolveOwner], ownerChain } as const
})
