/**
 * The hash component: the remediation target's canonical spec hash (core `specHash`, the function the execution side
 * captures `preRemediationSpecHash` with). Taken once after the run (`postRemediationSpecHash`), then again on every
 * reconcile (`currentSpecHash`); a difference means someone else changed the target while it was assessed.
 */
import type { TargetResource } from "@kubemend/core/domain/Meta"
import type { K8sService } from "@kubemend/core/K8s"
import { specHash } from "@kubemend/core/SpecHash"
import { Effect, Option } from "effect"

/** The target's hash now; None when the target is gone, its kind is not served, or the operator may not read it. */
export const currentHash = (k8s: K8sService, t: TargetResource) =>
  k8s.getResource({
    kind: t.kind,
    name: t.name,
    namespace: t.namespace ?? "",
    ...(t.apiVersion === undefined || t.apiVersion === "" ? {} : { apiVersion: t.apiVersion })
  }).pipe(
    Effect.map((o) => Option.some(specHash(o))),
    Effect.catchTags({
      K8sNotFound: () => Effect.succeed(Option.none<string>()),
      K8sUnknownKind: () => Effect.succeed(Option.none<string>()),
      K8sAmbiguousKind: () => Effect.succeed(Option.none<string>()),
      K8sUnavailable: (e) => (e.status === 403 ? Effect.succeed(Option.none<string>()) : Effect.fail(e))
    })
  )
