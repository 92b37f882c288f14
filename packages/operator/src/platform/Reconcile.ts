/**
 * The platform reconciler (sample-controller / kubebuilder shape): load the CR, handle deletion through the
 * finalizer, validate, migrate the storage schema, apply the workloads and RBAC with our field manager, rebuild the
 * status from the world, and say when to look again. Level-triggered: every run recomputes everything from the CR.
 */
import type { K8sConflict, K8sNotFound, K8sUnavailable, KubeObject } from "@kubemend/core/K8s"
import { formatIssues } from "@kubemend/core/domain/Issues"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { CrVersion } from "@kubemend/core/domain/Meta"
import { decodePlatformSpec, PlatformKind, type PlatformPhase } from "@kubemend/core/domain/Platform/index"
import { Clock, Effect, Either, Option } from "effect"
import { Cluster, type ClusterService, type ObjectRef } from "../runtime/Cluster.ts"
import { type Reconciled, splitKey } from "../runtime/Workers.ts"
import { OperatorConfig } from "../OperatorConfig.ts"
import { applyChanged, applyOwned, type NotOwned, ownedClusterRbac, prune, recordEvent, refOf, removeOwned, snapshot, writeStatus } from "./Apply.ts"
import { jobState, migrationHash, renderMigrationJob } from "./Migration.ts"
import { deployedServices, finalizerName, ownerLabels, ownerReference, services, workloadName } from "./Names.ts"
import { networkPolicyNames, renderNetworkPolicies } from "./NetworkPolicies.ts"
import { ensureExportKey } from "./ExportKey.ts"
import { detectIssuer, ensureServingCertificates } from "./ServingCerts.ts"
import { renderClusterRbac } from "./Rbac.ts"
import { renderConsoleConfig, renderServiceConfigs } from "./RenderConfig.ts"
import { mergeConditions } from "../runtime/Conditions.ts"
import { type ConditionInput, deploymentReadiness, servicesPhase, storedStatus, toServiceStatus, worldConditions } from "./Status.ts"
import { ansibleReady } from "./AnsibleReady.ts"
import { validateReferences } from "./Validate.ts"
import { renderOpa } from "./Opa.ts"
import { renderWorkloads } from "./Workloads.ts"
import { keepScaled } from "./Availability.ts"

export type ReconcileError = K8sUnavailable | K8sNotFound | K8sConflict

interface Migration {
  readonly lastMigrationHash: string | undefined
  readonly lastMigrationTime: string | undefined
}

/** How steps 5–7 ended: everything applied, stopped early (migration pending or failed), or blocked by a foreign object. */
type Applied =
  | { readonly _tag: "Applied"; readonly migration: Migration; readonly deployments: ReadonlyArray<KubeObject> }
  | { readonly _tag: "Stop"; readonly reconciled: Reconciled }
  | { readonly _tag: "NotOwned"; readonly error: NotOwned }

/** The namespaced kinds a reconcile writes (listed once per reconcile for ownership and change checks). */
const namespacedKinds = [
  ["v1", "ServiceAccount"],
  ["v1", "ConfigMap"],
  ["v1", "Service"],
  ["apps/v1", "Deployment"],
  ["policy/v1", "PodDisruptionBudget"],
  ["autoscaling/v2", "HorizontalPodAutoscaler"],
  ["batch/v1", "Job"],
  ["networking.k8s.io/v1", "NetworkPolicy"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"]
] as const

const rfc3339 = (millis: number) => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/** API server endpoints (`default/kubernetes`), for network policies when no CIDR is configured. */
const discoverApiServer = (cluster: ClusterService) =>
  cluster.get({ apiVersion: "v1", kind: "Endpoints", name: "kubernetes", namespace: "default" }).pipe(
    Effect.map(Option.match({
      onNone: () => [],
      onSome: (ep) =>
        ((ep as { subsets?: ReadonlyArray<{ addresses?: ReadonlyArray<{ ip: string }>; ports?: ReadonlyArray<{ port: number }> }> })
          .subsets ?? []).flatMap((s) => (s.addresses ?? []).flatMap((a) => (s.ports ?? []).map((p) => ({ cidr: `${a.ip}/32`, port: p.port }))))
    })),
    Effect.orElseSucceed(() => [])
  )

/**
 * The platform CR that runs `ref`'s namespace, being deleted or not: the one already admitted (it holds our
 * finalizer), else the first created, then by name (timestamps have one-second resolution).
 */
const namespaceOwner = (cluster: ClusterService, ref: ObjectRef, finalizer: string) =>
  Effect.map(cluster.list({ apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.namespace! }), (list) => {
    const admitted = (o: KubeObject) => ((o.metadata.finalizers ?? []).includes(finalizer) ? 0 : 1)
    return [...list.items].sort((a, b) =>
      admitted(a) - admitted(b) ||
      (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
      a.metadata.name.localeCompare(b.metadata.name)
    )[0]?.metadata.name ?? ref.name
  })

export class PlatformReconciler extends Effect.Service<PlatformReconciler>()("@kubemend/operator/PlatformReconciler", {
  effect: Effect.gen(function* () {
    const cluster = yield* Cluster
    const config = yield* OperatorConfig
    const apiGroup = config.apiGroup
    const finalizer = finalizerName(apiGroup)

    const reconcile = Effect.fn("PlatformReconciler.reconcile")(function* (key: string) {
      const { namespace, name } = splitKey(key)
      const ref = { apiVersion: `${apiGroup}/${CrVersion}`, kind: PlatformKind, name, namespace }
      const owner = { apiGroup, namespace, name }

      // 1. Load the platform CR. Gone: nothing to do (its cluster-scoped objects went with the finalizer).
      const loaded = yield* cluster.get(ref)
      if (Option.isNone(loaded)) return {} satisfies Reconciled
      let cr: KubeObject = loaded.value
      const finalizers = cr.metadata.finalizers ?? []

      // 2. Being deleted: remove the cluster-scoped RBAC (ownerReferences cannot reach it), then let it go.
      if (cr.metadata.deletionTimestamp !== undefined) {
        if (!finalizers.includes(finalizer)) return {} satisfies Reconciled
        const removed = yield* prune(cluster, (yield* ownedClusterRbac(cluster, owner)).items, new Set())
        yield* cluster.patch(ref, { metadata: { finalizers: finalizers.filter((f) => f !== finalizer) } })
        yield* Effect.logInfo("cleaned up cluster-scoped RBAC").pipe(Effect.annotateLogs("removed", removed.length))
        return {} satisfies Reconciled
      }
      const now = rfc3339(yield* Clock.currentTimeMillis)
      // One platform per namespace: workloads, Services and config have fixed names there. The first created owns
      // it; a later one is refused before it writes anything (no finalizer either) and looked at again, in case the
      // owner goes away.
      const owning = yield* namespaceOwner(cluster, ref, finalizer)
      if (owning !== name) {
        const message = `namespace ${namespace} is run by platform ${PlatformKind} "${owning}" (created first); ` +
          `one platform per namespace: delete this one or create it in another namespace`
        cr = yield* writeStatus(cluster, cr, {
          ...storedStatus(cr),
          phase: "Error",
          message,
          ...(cr.metadata.generation === undefined ? {} : { observedGeneration: cr.metadata.generation }),
          conditions: mergeConditions(
            storedStatus(cr).conditions,
            [{ type: "BYOValidated", status: "False", reason: "NamespaceTaken", message }],
            now,
            cr.metadata.generation
          )
        })
        yield* recordEvent(cluster, cr, "Warning", "NamespaceTaken", message)
        return { requeueAfter: config.errorRequeue } satisfies Reconciled
      }
      if (!finalizers.includes(finalizer)) cr = yield* cluster.patch(ref, { metadata: { finalizers: [...finalizers, finalizer] } })

      const generation = cr.metadata.generation
      const conditions: Array<ConditionInput> = []
      const status = (phase: PlatformPhase, extra: Record<string, unknown> = {}) => {
        const stored = storedStatus(cr)
        const { message: _m, ...rest } = stored
        return {
          ...rest,
          phase,
          ...(generation === undefined ? {} : { observedGeneration: generation }),
          conditions: mergeConditions(stored.conditions, conditions, now, generation),
          ...extra
        }
      }
      const enter = (phase: PlatformPhase, extra: Record<string, unknown> = {}) =>
        Effect.gen(function* () {
          const before = storedStatus(cr).phase
          cr = yield* writeStatus(cluster, cr, status(phase, extra))
          if (before !== phase) yield* Effect.logInfo(`platform phase ${before ?? "(none)"} -> ${phase}`).pipe(Effect.annotateLogs("phase", phase))
        })

      // 3. Validate: the spec rules, then every reference into the cluster. A new generation starts in Validating.
      if (storedStatus(cr).observedGeneration !== generation || storedStatus(cr).phase === undefined) yield* enter("Validating")
      const decoded = decodePlatformSpec(cr.spec)
      const issues = Either.isLeft(decoded) ? decoded.left : yield* validateReferences(cluster, decoded.right, { namespace, apiGroup })
      if (Either.isLeft(decoded) || issues.length > 0) {
        const message = formatIssues(issues)
        conditions.push({ type: "BYOValidated", status: "False", reason: Either.isLeft(decoded) ? "InvalidSpec" : "MissingReference", message })
        yield* enter("Error", { message })
        yield* recordEvent(cluster, cr, "Warning", "ValidationFailed", message)
        return { requeueAfter: config.errorRequeue } satisfies Reconciled
      }
      const spec = decoded.right
      conditions.push({ type: "BYOValidated", status: "True", reason: "Validated", message: "spec and references are valid" })

      // 4. Compute the desired state from the spec (and who issues the serving certificates in this cluster).
      const renderCtx = { namespace, apiGroup, toolPrefix: config.toolPrefix }
      const configs = renderServiceConfigs(spec, renderCtx)
      const certificates = yield* detectIssuer(cluster)
      const workloads = [
        ...renderWorkloads(spec, {
          cr,
          apiGroup,
          image: config.image,
          configs,
          certificates,
          ...(spec.console.enabled ? { consoleConfig: renderConsoleConfig(spec, renderCtx) } : {})
        }),
        ...renderOpa(spec, { cr, apiGroup, certificates })
      ]
      const rbac = renderClusterRbac(spec, { namespace, name, apiGroup, toolPrefix: config.toolPrefix, operator: config.serviceAccount })
      const policies = renderNetworkPolicies(spec, {
        cr,
        apiGroup,
        discoveredApiServer: spec.networkPolicies.enabled && spec.networkPolicies.apiServerCIDR === undefined
          ? yield* discoverApiServer(cluster) :
          []
      })
      const prerequisite = (o: KubeObject) => o.kind === "ServiceAccount" || o.kind === "ConfigMap"

      const applied: Applied = yield* Effect.gen(function* () {
        // What exists of every kind we write, one list per kind.
        const live = yield* snapshot(cluster, namespacedKinds.map(([apiVersion, kind]) => ({ apiVersion, kind, namespace })))
        // 5. Migrating: accounts and config files first (the Job mounts storage's), then the Job unless already run.
        yield* applyOwned(cluster, cr, workloads.filter(prerequisite), live)
        yield* ensureExportKey(cluster, cr, apiGroup)
        // Serving certificates before the pods that mount them; this process's own calls to the agent, storage and
        // OPA (the lifecycle controllers, the policy sync) trust the platform's CA from here on.
        const bundle = yield* ensureServingCertificates(cluster, cr, apiGroup, [...deployedServices(spec), "opa"], certificates)
        if (Option.isSome(bundle)) trustAuthority(key, bundle.value)
        const hash = migrationHash(spec, config.image)
        let migration: Migration = { lastMigrationHash: storedStatus(cr).lastMigrationHash, lastMigrationTime: storedStatus(cr).lastMigrationTime }
        if (migration.lastMigrationHash !== hash) {
          const job = renderMigrationJob(spec, { cr, apiGroup, image: config.image, hash })
          // A Job's template is immutable: an existing one is only read, never re-applied.
          const [current] = live.get(refOf(job)) === undefined ? yield* applyOwned(cluster, cr, [job], live) : [live.get(refOf(job))]
          const state = current === undefined ? "Running" : jobState(current)
          if (state !== "Succeeded") {
            const failed = state === "Failed"
            const message = `migration Job ${job.metadata.name} ${failed ? "failed" : "is running"}`
            conditions.push({
              type: "MigrationComplete",
              status: failed ? "False" : "Unknown",
              reason: failed ? "JobFailed" : "JobRunning",
              message
            })
            yield* enter(failed ? "Error" : "Migrating", failed ? { message } : {})
            if (failed) yield* recordEvent(cluster, cr, "Warning", "MigrationFailed", message)
            return { _tag: "Stop", reconciled: { requeueAfter: failed ? config.errorRequeue : config.progressRequeue } } as const
          }
          migration = { lastMigrationHash: hash, lastMigrationTime: now }
        }
        conditions.push({ type: "MigrationComplete", status: "True", reason: "Migrated", message: `schema at ${hash}` })

        // 6. Deploying: Deployments, Services, console, network policies; what was switched off is removed.
        const deployed = yield* applyOwned(cluster, cr, [...workloads.filter((o) => !prerequisite(o)).map((o) => keepScaled(o, live)), ...policies], live)
        const labels = ownerLabels(apiGroup, namespace, name)
        const keptPolicies = new Set(policies.map((p) => p.metadata.name))
        const rendered = new Set(workloads.map((o) => `${o.kind}/${o.metadata.name}`))
        yield* removeOwned(
          cluster,
          cr,
          [
            ...(spec.console.enabled ? [] : (["Deployment", "Service", "ConfigMap", "ServiceAccount"] as const).map((kind) => ({
              apiVersion: kind === "Deployment" ? "apps/v1" : "v1",
              kind,
              name: workloadName("console"),
              namespace
            }))),
            ...networkPolicyNames.filter((n) => !keptPolicies.has(n)).map((n) => ({
              apiVersion: "networking.k8s.io/v1",
              kind: "NetworkPolicy",
              name: n,
              namespace
            })),
            // A budget or autoscaler switched off (or a service down to one replica) goes too.
            ...[...services, "console" as const].flatMap((svc) =>
              ([["policy/v1", "PodDisruptionBudget"], ["autoscaling/v2", "HorizontalPodAutoscaler"]] as const)
                .filter(([, kind]) => !rendered.has(`${kind}/${workloadName(svc)}`))
                .map(([apiVersion, kind]) => ({ apiVersion, kind, name: workloadName(svc), namespace }))
            )
          ],
          live,
          labels
        )

        // 7. RBAC: cluster-scoped, so owned through labels and the finalizer; stale roles and bindings are pruned.
        const rbacLive = yield* ownedClusterRbac(cluster, owner)
        const desiredRbac = [...rbac.clusterRoles, ...rbac.clusterRoleBindings]
        yield* applyChanged(cluster, desiredRbac, rbacLive)
        yield* prune(cluster, rbacLive.items, new Set(desiredRbac.map((o) => o.metadata.name)))
        yield* applyOwned(cluster, cr, rbac.roleBindings.map((b) => ({ ...b, metadata: { ...b.metadata, ownerReferences: [ownerReference(cr)] } })), live)
        return { _tag: "Applied", migration, deployments: deployed.filter((o) => o.kind === "Deployment") } as const
      }).pipe(Effect.catchTag("NotOwned", (error) => Effect.succeed({ _tag: "NotOwned", error } as const)))

      if (applied._tag === "Stop") return applied.reconciled
      if (applied._tag === "NotOwned") {
        // Ownership: someone else's object has our name. Do not take it over; tell the user; wait for a change.
        const message = `${applied.error.kind} "${applied.error.name}" exists and is not owned by this platform`
        conditions.push({ type: "ServicesDeployed", status: "False", reason: "ResourceNotOwned", message })
        yield* enter("Error", { message })
        yield* recordEvent(cluster, cr, "Warning", "ResourceNotOwned", message)
        return {} satisfies Reconciled
      }
      const migration = applied.migration

      // 8. Rebuild the status from the world: each Deployment's readiness decides the phase.
      const names = [...deployedServices(spec), ...(spec.console.enabled ? (["console"] as const) : [])]
      const readiness = names.map((svc) => deploymentReadiness(svc, applied.deployments.find((d) => d.metadata.name === workloadName(svc))))
      const phase = servicesPhase(readiness)
      const notReady = readiness.filter((s) => !s.ready).map((s) => s.name)
      conditions.push(...worldConditions(rbac, readiness, yield* ansibleReady(cluster, namespace, spec)))
      yield* enter(phase, {
        services: readiness.map(toServiceStatus),
        ...(migration.lastMigrationHash === undefined ? {} : { lastMigrationHash: migration.lastMigrationHash }),
        ...(migration.lastMigrationTime === undefined ? {} : { lastMigrationTime: migration.lastMigrationTime }),
        boundAdditionalClusterRoles: rbac.additionalRoles,
        boundToolRoleBindings: rbac.toolBindingNames,
        ...(phase === "Running" ? {} : { message: `not ready: ${notReady.join(", ")}` })
      })

      // 9. Look again: rarely when settled, soon while rolling out or degraded (Deployments are not watched).
      return { requeueAfter: phase === "Running" ? config.resyncPeriod : config.progressRequeue } satisfies Reconciled
    })

    return { reconcile } as const
  })
}) {}
