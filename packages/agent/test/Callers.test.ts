/**
 * The interactive MCP believes an acting user only from a verified JWT or from the gateway's ServiceAccount; identity
 * headers from anyone else are ignored and audited, and unverifiable tokens are refused.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { Audit, AuditRecorder } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import { DevIssuer } from "@kubemend/core/devkit/Issuer"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { Callers } from "../src/Interactive/Callers.ts"

const gatewayToken = "gateway-sa-token"
const otherToken = "other-sa-token"

const TestCallers = Layer.unwrapEffect(
  Effect.map(DevIssuer, (issuer) =>
    Callers.layer().pipe(
      Layer.provide(AuthConfig.layer({
        providers: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }],
        allowInsecureIssuers: true
      })),
      Layer.provide(K8sMemory.layer({
        namespace: "kubemend-system",
        tokens: {
          [gatewayToken]: { username: "system:serviceaccount:kubemend-system:kubemend-gateway", groups: ["system:serviceaccounts"] },
          [otherToken]: { username: "system:serviceaccount:apps:scraper", groups: ["system:serviceaccounts"] }
        }
      }))
    ))
).pipe(Layer.provideMerge(Layer.merge(DevIssuer.layer(), Audit.layerRecording)))

const ignoredClaims = Effect.flatMap(AuditRecorder, (r) => r.events).pipe(
  Effect.map((events) => events.filter((e) => e.event_type === "agent.identity.ignored").map((e) => [e.actor_id, e.event_data["claimed"]]))
)

describe("interactive callers", () => {
  layer(TestCallers, { excludeTestServices: true })("verified sources only", (it) => {
    it.effect("a bearer JWT of a trusted issuer names the caller; a header naming someone else is ignored and audited", () =>
      Effect.gen(function* () {
        const issuer = yield* DevIssuer
        const callers = yield* Callers
        const token = yield* issuer.token({ sub: "u-1", preferred_username: "carol", groups: ["sre"] })
        const acting = yield* callers.resolve({ authorization: `Bearer ${token}`, "x-kubemend-user": "mallory" })
        assert.deepStrictEqual(Option.getOrThrow(acting.caller), { user: "carol", groups: ["sre"], via: "jwt" })
        assert.isFalse(acting.delegate)
        assert.deepInclude(yield* ignoredClaims, ["carol", "mallory"])
      }))

    it.effect("identity headers without a verified caller are ignored and audited", () =>
      Effect.gen(function* () {
        const callers = yield* Callers
        const anonymous = yield* callers.resolve({ "x-kubemend-user": "dave", "x-kubemend-groups": "sre, ops" })
        assert.isTrue(Option.isNone(anonymous.caller))
        assert.isFalse(anonymous.delegate)
        const other = yield* callers.resolve({ authorization: `Bearer ${otherToken}`, "x-kubemend-user": "erin" })
        assert.isTrue(Option.isNone(other.caller))
        assert.isFalse(other.delegate)
        const claims = yield* ignoredClaims
        assert.deepInclude(claims, ["anonymous", "dave"])
        assert.deepInclude(claims, ["system:serviceaccount:apps:scraper", "erin"])
      }))

    it.effect("the gateway's ServiceAccount passes the user it authenticated", () =>
      Effect.gen(function* () {
        const callers = yield* Callers
        const acting = yield* callers.resolve({ authorization: `Bearer ${gatewayToken}`, "x-kubemend-user": "frank", "x-kubemend-groups": "sre" })
        assert.deepStrictEqual(Option.getOrThrow(acting.caller), { user: "frank", groups: ["sre"], via: "gateway" })
        assert.isTrue(acting.delegate)
      }))

    it.effect("forged, expired, alg none and foreign-issuer tokens are refused; control characters too", () =>
      Effect.gen(function* () {
        const issuer = yield* DevIssuer
        const callers = yield* Callers
        const good = yield* issuer.token({ sub: "u-1", preferred_username: "carol" })
        const bad = [
          `${good.slice(0, -4)}AAAA`,
          yield* issuer.bad.expired,
          yield* issuer.bad.algNone(),
          yield* issuer.bad.wrongIssuer,
          "garbage"
        ]
        for (const token of bad) {
          const refused = yield* Effect.either(callers.resolve({ authorization: `Bearer ${token}`, "x-kubemend-user": "mallory" }))
          assert.isTrue(Either.isLeft(refused), token.slice(0, 20))
        }
        assert.isTrue(Either.isLeft(yield* Effect.either(callers.resolve({ "x-kubemend-user": "eve\u0007" }))))
      }))
  })
})
