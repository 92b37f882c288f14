/**
 * The storage service's export signing key, kept in a Secret the operator creates once per platform (EC P-256,
 * PKCS#8 PEM) and never rewrites: exports signed today must still verify after any restart or reconcile. Deleting
 * the Secret rotates the key (the next reconcile makes a new one); exports signed with the old key then need the
 * old public key.
 */
import type { K8sUnavailable, KubeObject } from "@kubemend/core/K8s"
import { Effect, Option } from "effect"
import { generateKeyPairSync } from "node:crypto"
import type { ClusterService } from "../runtime/Cluster.ts"
import { ownerLabels, ownerReference, paths } from "./Names.ts"

export const exportKeySecretName = "kubemend-export-signing-key"
export const exportKeyFileName = "signing-key.pem"
export const exportKeyDir = `${paths.secretsDir}/export`

/** Creates the Secret when it is missing; an existing one is left exactly as it is. */
export const ensureExportKey = (cluster: ClusterService, cr: KubeObject, apiGroup: string): Effect.Effect<void, K8sUnavailable> =>
  Effect.gen(function* () {
    const namespace = cr.metadata.namespace ?? ""
    const existing = yield* cluster.get({ apiVersion: "v1", kind: "Secret", name: exportKeySecretName, namespace })
    if (Option.isSome(existing)) return
    const pem = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    yield* cluster.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: exportKeySecretName,
        namespace,
        labels: ownerLabels(apiGroup, namespace, cr.metadata.name),
        ownerReferences: [ownerReference(cr)]
      },
      type: "Opaque",
      data: { [exportKeyFileName]: Buffer.from(pem).toString("base64") }
    } as KubeObject)
  })
