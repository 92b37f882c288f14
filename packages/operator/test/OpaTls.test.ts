/**
 * The operator's OPA client over HTTPS, as in a cluster: OPA serves the certificate the platform CA issued it, and
 * the client (built at start, before the operator has issued or trusted any CA) is refused during the handshake
 * until the operator trusts that CA, then loads and evaluates policies; trusting another CA instead refuses again.
 */
import { describe, expect, it } from "@effect/vitest"
import { make as makeOpa } from "@kubemend/devkit/Opa"
import { issueServing, makeAuthority, validFor } from "@kubemend/core/Tls/Certificates"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { Duration, Effect, Layer, Option } from "effect"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { OpaClient } from "../src/clients/OpaClient.ts"
import { servingHosts } from "../src/platform/ServingCerts.ts"

const policy = "package approval\n\nrequire_approval if input.confidence < 0.8\n"

describe("the OPA client over TLS", () => {
  it.live("verifies OPA's serving certificate against the platform CA the operator trusts, even one trusted after start", () =>
    Effect.gen(function* () {
      const now = new Date()
      const { ca, other, leaf } = yield* Effect.promise(async () => {
        const ca = await makeAuthority("kubemend-ca.kubemend-system", validFor(now, 30))
        const other = await makeAuthority("someone-else", validFor(now, 30))
        const leaf = await issueServing(ca, "kubemend-opa.kubemend-system.svc", [...servingHosts("opa", "kubemend-system"), "127.0.0.1"], validFor(now, 3))
        return { ca, other, leaf }
      })
      const opa = yield* makeOpa({ tls: leaf })
      expect(opa.url).toMatch(/^https:\/\//)
      const client = yield* Effect.provide(
        OpaClient,
        yield* Layer.build(OpaClient.layer.pipe(Layer.provide(LifecycleConfig.layer({ policy: { url: opa.url, requestTimeout: Duration.seconds(5) } }))))
      )

      const untrusted = yield* Effect.flip(client.putPolicy("kubemend/approval.rego", policy))
      expect(untrusted._tag).toBe("PolicyUnavailable")
      expect(opa.evaluations()).toBe(0)

      trustAuthority("opa-test-platform", ca.certPem)
      yield* client.putPolicy("kubemend/approval.rego", policy)
      expect(yield* client.evaluate(["approval", "require_approval"], { confidence: 0.5 })).toEqual(Option.some(true))

      trustAuthority("opa-test-platform", other.certPem)
      expect((yield* Effect.flip(client.evaluate(["approval", "require_approval"], { confidence: 0.5 })))._tag).toBe("PolicyUnavailable")
      expect(opa.evaluations()).toBe(1)
    }).pipe(Effect.scoped))
})
