/**
 * What the local platform does around its services: paces the platform CR for a person watching, waits for the
 * operator's RBAC, and seeds storage's workflow catalog.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import type { DevKube } from "@kubemend/devkit/kube/index"
import { formatGoDuration } from "@kubemend/core/Config"
import { StorageApi } from "@kubemend/core/StorageApi"
import { Duration, Effect, Schedule } from "effect"
import { workflowDocuments } from "./Demo.ts"
import { namespace } from "./Platform.ts"

/** Seeds the storage catalog through its own typed client, as any other caller would. */
export const registerWorkflows = (storageUrl: string, token: string) =>
  Effect.gen(function* () {
    const client = yield* HttpApiClient.make(StorageApi, {
      baseUrl: storageUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    })
    for (const w of workflowDocuments) {
      yield* client.actionTypes.createActionType({
        payload: { name: w.actionType, description: { what: w.what, whenToUse: w.whenToUse }, registeredBy: "kubemend-local" }
      })
      yield* client.workflows.createWorkflow({ payload: { content: w.content, source: "api", registeredBy: "kubemend-local" } })
    }
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** Waits (30 s at most) until the operator has bound the platform's ServiceAccounts to their roles. */
export const awaitRbac = (kube: DevKube) =>
  Effect.sync(() => kube.get("rbac.authorization.k8s.io/v1", "RoleBinding", "storage-client-operator", namespace)).pipe(
    Effect.filterOrFail((b) => b !== undefined, () => "the operator has not rendered the platform's RBAC yet"),
    Effect.retry(Schedule.spaced(Duration.millis(200)).pipe(Schedule.upTo(Duration.seconds(30)))),
    Effect.orDie
  )

/**
 * The platform CR with the local stabilization window. The CR's own settings win over the operator's config (and the
 * API server fills in the CRD's 5-minute default), so the pace a person watches is set in the CR.
 */
export const paced = <A extends { readonly spec: object }>(cr: A, stabilization: Duration.Duration): A => {
  const spec = cr.spec as Record<string, unknown>
  const orchestrator = (spec["remediationOrchestrator"] ?? {}) as Record<string, unknown>
  return {
    ...cr,
    spec: {
      ...spec,
      remediationOrchestrator: {
        ...orchestrator,
        effectivenessAssessment: {
          ...(orchestrator["effectivenessAssessment"] as object | undefined),
          stabilizationWindow: formatGoDuration(stabilization)
        }
      }
    }
  }
}
