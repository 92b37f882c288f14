/** The lifecycle controllers' install: their CRDs, the operator's RBAC for them and its config, exercised against the dev API server. */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { DevKube, type RecordedRequest } from "@kubemend/devkit/kube/index"
import { crKinds, crVersion } from "@kubemend/core/K8s/Config"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as YAML from "yaml"
import { LeadershipLive } from "../src/runtime/Leadership.ts"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { LifecycleRbac } from "../src/remediation/Rbac.ts"
import { LifecycleOperatorLive } from "../src/Service.ts"
import { apiGroup, namespace } from "./PlatformHarness.ts"
import { fakeAgentToken, startFakeAgent, workflowResult } from "./FakeAgent.ts"
import { policyEngine, workload } from "./LifecycleHarness.ts"

const deployDir = Path.resolve(import.meta.dirname, "../../../deploy")
const crdDir = Path.join(deployDir, "crds")
const docs = (file: string) => YAML.parseAllDocuments(Fs.readFileSync(Path.join(deployDir, file), "utf8")).map((d) => d.toJS() as any)

interface PolicyRule {
  readonly apiGroups?: ReadonlyArray<string>
  readonly resources?: ReadonlyArray<string>
  readonly verbs?: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
}

const operatorObjects = () => docs("operator/operator.yaml")
const operatorRole = () => operatorObjects().find((o) => o.kind === "ClusterRole") as { rules: ReadonlyArray<PolicyRule> }
const operatorConfigFile = () => YAML.parse(operatorObjects().find((o) => o.kind === "ConfigMap").data["config.yaml"])
const deployedCrds = () => Fs.readdirSync(crdDir).filter((f) => f.endsWith(".yaml")).map((f) => YAML.parse(Fs.readFileSync(Path.join(crdDir, f), "utf8")))

/** Kubernetes serves these groups itself (and Tekton, when used, installs its own CRDs); every other group needs ours. */
const builtInGroups = new Set(["", "apps", "batch", "autoscaling", "policy", "coordination.k8s.io", "tekton.dev"])
const required = LifecycleRbac
const calls = (rows: typeof LifecycleRbac) => rows.flatMap((row) => row.verbs.map((verb) => ({ group: row.group, resource: row.resource, verb })))
/** Resources the platform reconciler also uses: the operator's role grants them more than the lifecycle needs. */
const sharedWithPlatform = new Set(["kubemends", "deployments", "jobs", "secrets", "configmaps", "horizontalpodautoscalers", "poddisruptionbudgets"])
const callKey = (c: { readonly group: string; readonly resource: string; readonly verb: string }) => `${c.verb} ${c.group}/${c.resource}`
const grants = (rules: ReadonlyArray<PolicyRule>, group: string, resource: string, verb: string) =>
  rules.some((r) =>
    r.resourceNames === undefined && (r.apiGroups ?? []).includes(group) &&
    (r.resources ?? []).includes(resource) && (r.verbs ?? []).includes(verb)
  )

describe("the lifecycle controllers' install (deploy/crds + deploy/operator)", () => {
  it("every kind the lifecycle touches has a CRD in deploy/crds (with a status subresource where it writes status) or is built in", () => {
    const crds = deployedCrds()
    for (const row of LifecycleRbac) {
      const [plural, sub] = row.resource.split("/")
      if (builtInGroups.has(row.group)) continue
      const crd = crds.find((c) => c.spec.group === row.group && c.spec.names.plural === plural)
      expect(crd, `CRD for ${row.resource}.${row.group}`).toBeDefined()
      expect(crd.spec.names.kind).toBe({ ...crKinds, remediationworkflows: "RemediationWorkflow", actiontypes: "ActionType" }[plural as keyof typeof crKinds])
      const version = crd.spec.versions.find((v: any) => v.name === crVersion)
      expect(version?.served, `${plural} served at ${crVersion}`).toBe(true)
      if (sub === "status") expect(version.subresources).toEqual({ status: {} })
    }
    for (const plural of ["signalprocessings", "notificationrequests", "effectivenessassessments"]) {
      expect(crds.some((c) => c.spec.names.plural === plural)).toBe(true)
    }
    expect([...new Set(LifecycleRbac.filter((r) => !builtInGroups.has(r.group)).map((r) => r.group))]).toEqual([apiGroup])
  })

  it("the operator's ClusterRole grants every call in the lifecycle table, and no more on the lifecycle's own resources", () => {
    const rules = operatorRole().rules
    const missing = calls(required).filter((c) => !grants(rules, c.group, c.resource, c.verb)).map(callKey)
    expect(missing).toEqual([])
    // Least privilege: on what only the lifecycle uses (not the platform CR, Deployments and Jobs, which the platform
    // reconciler manages) nothing beyond the table, and no wildcards anywhere.
    const owned = required.filter((r) => !sharedWithPlatform.has(r.resource))
    // Rows of one resource (routing reads pods, the execution controller lists them) grant together.
    const allowed = (group: string, resource: string) =>
      new Set<string>(owned.filter((o) => o.group === group && o.resource === resource).flatMap((o) => o.verbs))
    const extra = [
      ...new Set(rules.flatMap((r) =>
        owned.filter((row) => (r.apiGroups ?? []).includes(row.group) && (r.resources ?? []).includes(row.resource))
          .flatMap((row) => (r.verbs ?? []).filter((v) => !allowed(row.group, row.resource).has(v)).map((v) => `${v} ${row.group}/${row.resource}`))
      ))
    ]
    expect(extra).toEqual([])
    expect(rules.some((r) => (r.resources ?? []).includes("*") || (r.verbs ?? []).includes("*"))).toBe(false)
    // The signal stream is a local-platform demo: the operator never creates RRs in a cluster.
    expect(grants(rules, apiGroup, "remediationrequests", "create")).toBe(false)
  })

  it.effect("the operator's config file loads through LifecycleConfig: the in-cluster agent, no demo parts", () =>
    Effect.gen(function* () {
      const file = operatorConfigFile()
      const settings = yield* Effect.provide(LifecycleConfig, LifecycleConfig.layerConfig).pipe(
        Effect.withConfigProvider(ConfigProvider.fromJson(file))
      )
      expect(settings.agentUrl).toBe("https://kubemend-agent.kubemend-system.svc:8443")
      expect(settings.enabled).toBe(true)
      expect(settings).not.toHaveProperty("signals")
      // The controller namespace is read by LifecycleOperatorLive; the run below shows it is used.
      expect(file.lifecycle.namespace).toBe(namespace)
    }))

  it.live("as the operator's ServiceAccount with exactly the manifest's RBAC, RRs go to Completed and every request is allowed", () =>
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      for (const f of Fs.readdirSync(crdDir).filter((f) => f.endsWith(".yaml"))) kube.seedYaml(Fs.readFileSync(Path.join(crdDir, f), "utf8"))
      kube.seed([
        ...operatorObjects(),
        ...discoveryForAuthenticated,
        { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", labels: { [`${apiGroup}/managed`]: "true" } } },
        // An unlabelled namespace whose Deployment is labelled: the target's own label is read.
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "legacy" } },
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "batch", namespace: "legacy", labels: { [`${apiGroup}/managed`]: "true" } }, spec: {} },
        // rr-auto's target, healthy after its workflow: the effectiveness monitor reads its pods.
        ...workload("checkout")
      ])
      const sa = "system:serviceaccount:kubemend-operator:kubemend-operator"
      const token = kube.registerServiceAccountToken("kubemend-operator", "kubemend-operator")
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-operator-"))),
        (d) => Effect.sync(() => Fs.rmSync(d, { recursive: true, force: true }))
      )
      const kubeconfig = Path.join(dir, "kubeconfig")
      Fs.writeFileSync(kubeconfig, kube.kubeConfig({ token }))
      const agent = yield* startFakeAgent
      const opa = yield* policyEngine()
      agent.script = (req) =>
        req["remediation_id"] === "rr-approve"
          ? { result: { confidence: 0.5 } }
          : req["remediation_id"] === "rr-escalate"
          ? {
            result: workflowResult({
              selected_workflow: null,
              actionable: false,
              investigation_outcome: "escalated",
              needs_human_review: true,
              human_review_reason: "operator_escalation"
            })
          }
          : { result: { confidence: 0.95 } }

      // operator.yaml's config, pointed at this cluster and agent, with short waits; audit events to the log.
      const { storage: _storage, ...file } = operatorConfigFile()
      const config = {
        ...file,
        kubeconfig,
        lifecycle: {
          ...file.lifecycle,
          agentUrl: agent.url,
          agentToken: fakeAgentToken,
          policy: { url: opa.url },
          pollInterval: "20ms",
          backoffBase: "50ms",
          backoffMax: "1s"
        },
        remediationOrchestrator: { effectivenessAssessment: { stabilizationWindow: "50ms" }, retention: { period: "2s" } }
      }
      yield* Logger.withMinimumLogLevel(
        Layer.build(LifecycleOperatorLive.pipe(
          Layer.provide(LeadershipLive),
          Layer.provide(NodeContext.layer),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(config)))
        )),
        LogLevel.Warning
      )

      // The test plays the gateway (creates RRs, approves, cancels) and the workflow engine, as the admin.
      const admin = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      const rrBody = (name: string, target: string, ns: string, n: number) => ({
        metadata: { name },
        spec: {
          signalName: "KubePodCrashLooping",
          signalFingerprint: String(n).repeat(64),
          severity: "critical",
          signalType: "alert",
          signalSource: "prometheus",
          targetType: "kubernetes",
          targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: target, namespace: ns }
        }
      })
      const status = (plural: "remediationrequests" | "workflowexecutions", name: string) =>
        admin.getCr(plural, name).pipe(Effect.map((o) => (o.status ?? {}) as Record<string, any>), Effect.orElseSucceed(() => ({} as Record<string, any>)))
      const until = <A>(what: string, read: Effect.Effect<A>, done: (a: A) => boolean) =>
        read.pipe(
          Effect.filterOrFail(done, () => "not yet"),
          Effect.retry(Schedule.spaced("25 millis")),
          Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error(`timed out waiting for ${what}`) })
        )
      const phase = (name: string, wanted: string) => until(`${name} ${wanted}`, status("remediationrequests", name), (s) => s["overallPhase"] === wanted)
      const exists = (plural: "remediationrequests" | "workflowexecutions", name: string) =>
        Effect.map(Effect.either(admin.getCr(plural, name)), Either.isRight)
      const completeWorkflow = (rr: string) =>
        until(`we-${rr}`, exists("workflowexecutions", `we-${rr}`), (ok) => ok).pipe(
          Effect.zipRight(admin.patchCrStatus("workflowexecutions", `we-${rr}`, { phase: "Completed", completionTime: new Date().toISOString() }))
        )

      for (
        const [i, [name, target, ns]] of [["rr-auto", "checkout", "shop"], ["rr-approve", "batch", "legacy"], ["rr-escalate", "cart", "shop"], [
          "rr-cancel",
          "web",
          "shop"
        ]].entries()
      ) {
        yield* admin.createCr("remediationrequests", rrBody(name!, target!, ns!, i + 1))
      }
      // Side by side, each checked as soon as it ends (terminal RRs are collected 2 s later).
      const [auto, , escalated] = yield* Effect.all([
        completeWorkflow("rr-auto").pipe(Effect.zipRight(phase("rr-auto", "Completed"))),
        phase("rr-approve", "AwaitingApproval").pipe(
          Effect.zipRight(admin.patchCrStatus("remediationapprovalrequests", "rar-rr-approve", { decision: "Approved", decidedBy: "bob" })),
          Effect.zipRight(completeWorkflow("rr-approve")),
          Effect.zipRight(phase("rr-approve", "Completed"))
        ),
        phase("rr-escalate", "Completed").pipe(Effect.zipLeft(admin.getCr("notificationrequests", "nr-rr-escalate-escalation"))),
        phase("rr-cancel", "Running").pipe(
          Effect.zipRight(admin.patchCrStatus("remediationrequests", "rr-cancel", { overallPhase: "Cancelled" })),
          Effect.zipRight(until("the cascade", status("workflowexecutions", "we-rr-cancel"), (s) => s["phase"] === "Failed"))
        )
      ], { concurrency: "unbounded" })
      expect(auto).toMatchObject({ outcome: "Remediated" })
      expect(escalated).toMatchObject({ outcome: "ManualReviewRequired" })
      for (const name of ["rr-auto", "rr-approve", "rr-escalate", "rr-cancel"]) {
        yield* until(`${name} garbage-collected`, exists("remediationrequests", name), (ok) => !ok)
      }

      // Everything the operator sent, judged by the server's RBAC authorizer (the dev API server records requests
      // and answers SubjectAccessReviews from the stored roles, but does not enforce them itself).
      const sent = kube.requests().filter((r) => r.token !== "devkube-admin")
      expect(sent.length).toBeGreaterThan(0)
      expect(sent.every((r) => r.user === sa)).toBe(true)
      const reviewed = yield* Effect.forEach(unique(sent), (r) => Effect.map(review(kube.url, sa, r), (allowed) => ({ r, allowed })))
      expect(reviewed.filter((x) => !x.allowed).map((x) => describeRequest(x.r))).toEqual([])
      const resources = sent.filter((r) => r.resource !== undefined)
      expect(resources.filter((r) => r.group === apiGroup && r.namespace !== namespace).map(describeRequest)).toEqual([])

      // The table is the code's: every call made is in it, and the run made every call in it but the other target kinds.
      const made = new Set(
        resources.map((r) => callKey({ group: r.group ?? "", resource: r.subresource ? `${r.resource}/${r.subresource}` : r.resource!, verb: r.verb }))
      )
      const table = new Set(calls(required).map(callKey))
      expect([...made].filter((c) => !table.has(c))).toEqual([])
      // The catalog's calls need storage, which this run leaves out: test/Catalog.test.ts makes them as this account.
      const targets = new Set([
        "pods",
        "nodes",
        "deployments",
        "statefulsets",
        "daemonsets",
        "replicasets",
        "jobs",
        "cronjobs",
        "remediationworkflows",
        "remediationworkflows/status",
        "actiontypes",
        "actiontypes/status",
        // Receiver credentials: this run configures no receivers (test/Notification.test.ts reads them).
        "secrets",
        // Policy ConfigMaps: this run has no platform CR naming them (test/PolicySync.test.ts reads them).
        "configmaps",
        // Workflow execution needs the catalog too: test/ExecutionJob.test.ts runs Jobs and reads failed runs' logs.
        "pods/log",
        "pipelineruns",
        // The lease is released (deleted) when the process stops, after this check: test/Leadership.test.ts shows it.
        "leases"
      ])
      expect(calls(required).filter((c) => !targets.has(c.resource)).map(callKey).filter((c) => !made.has(c))).toEqual([])
      expect(made.has("get apps/deployments")).toBe(true)
      expect(made.has("list /pods")).toBe(true)

      // With the ClusterRole as it was before the lifecycle rules, the same requests are refused.
      const role = kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", "kubemend-operator")!
      const lifecycleOnly = new Set(required.map((r) => r.resource).filter((r) => !sharedWithPlatform.has(r)))
      kube.put({ ...role, rules: (role["rules"] as ReadonlyArray<PolicyRule>).filter((r) => !(r.resources ?? []).some((x) => lifecycleOnly.has(x))) })
      const before = yield* Effect.forEach(unique(resources), (r) => Effect.map(review(kube.url, sa, r), (allowed) => ({ r, allowed })))
      const refused = before.filter((x) => !x.allowed).map((x) => x.r)
      expect(refused.map((r) => `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ""}`)).toEqual(
        expect.arrayContaining(["watch remediationrequests", "patch remediationrequests/status", "create signalprocessings", "get namespaces"])
      )
    }).pipe(Effect.scoped), { timeout: 120_000 })
})

/** What every real cluster grants authenticated users (`system:discovery`), which the REST mapper relies on. */
const discoveryForAuthenticated = [
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "system:discovery" },
    rules: [{ nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/version", "/version/"], verbs: ["get"] }]
  },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "system:discovery" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:discovery" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" }]
  }
]

const describeRequest = (r: RecordedRequest) =>
  r.resource === undefined
    ? `${r.verb} ${r.path}`
    : `${r.verb} ${r.group === "" ? "" : `${r.group}/`}${r.resource}${r.subresource ? `/${r.subresource}` : ""}` +
      `${r.namespace ? ` in ${r.namespace}` : ""}${r.name ? ` named ${r.name}` : ""}`

const unique = (requests: ReadonlyArray<RecordedRequest>) => [...new Map(requests.map((r) => [describeRequest(r), r])).values()]

/** A SubjectAccessReview for the request as the API server would authorize it (groups as a TokenReview gives them). */
const review = (url: string, user: string, r: RecordedRequest) =>
  Effect.promise(async () => {
    const attributes = r.resource === undefined
      ? { nonResourceAttributes: { verb: r.verb, path: r.path } }
      : {
        resourceAttributes: {
          verb: r.verb,
          group: r.group ?? "",
          resource: r.resource,
          ...(r.subresource === undefined ? {} : { subresource: r.subresource }),
          ...(r.namespace === undefined ? {} : { namespace: r.namespace }),
          ...(r.name === undefined ? {} : { name: r.name })
        }
      }
    const response = await fetch(`${url}/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer devkube-admin" },
      body: JSON.stringify({
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: { user, groups: ["system:serviceaccounts", "system:serviceaccounts:kubemend-operator", "system:authenticated"], ...attributes }
      })
    })
    const body = (await response.json()) as { status?: { allowed?: boolean } }
    return body.status?.allowed === true
  })
