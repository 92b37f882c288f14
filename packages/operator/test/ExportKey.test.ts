/**
 * Storage's export signing key: the reconcile creates its Secret once (a P-256 PKCS#8 key storage can load), never
 * rewrites it on later reconciles, mounts it into storage and points storage's config at it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createPrivateKey } from "node:crypto"
import * as YAML from "yaml"
import { exportKeySecretName } from "../src/platform/ExportKey.ts"
import { namespace, world } from "./PlatformHarness.ts"

describe("export signing key", () => {
  it.live("is created once, kept across reconciles, mounted into storage and named in its config", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      const secret = w.kube.get("v1", "Secret", exportKeySecretName, namespace) as any
      const pem = Buffer.from(secret.data["signing-key.pem"], "base64").toString()
      expect(createPrivateKey(pem).asymmetricKeyDetails?.namedCurve).toBe("prime256v1")
      expect(secret.metadata.ownerReferences[0].kind).toBe("Kubemend")

      yield* w.reconcile
      yield* w.reconcile
      const again = w.kube.get("v1", "Secret", exportKeySecretName, namespace) as any
      expect(again.data).toEqual(secret.data)
      expect(again.metadata.resourceVersion).toBe(secret.metadata.resourceVersion)

      const pod = (w.deployment("storage") as any).spec.template.spec
      expect(pod.volumes).toContainEqual({
        name: "export-signing-key",
        secret: { secretName: exportKeySecretName, items: [{ key: "signing-key.pem", path: "signing-key.pem" }] }
      })
      const configMap = w.kube.get("v1", "ConfigMap", "kubemend-storage", namespace) as any
      const config = YAML.parse(configMap.data["config.yaml"])
      expect(config.export.signingKeyFile).toBe("/etc/kubemend/secrets/export/signing-key.pem")
    })))
})
