/**
 * The interactive MCP admits only a verified JWT of a user with the console grant or a ServiceAccount holding
 * `agent-client`, and believes an acting
 * user only from the JWT or from the gateway's ServiceAccount; identity headers from any other admitted caller are
 * ignored and audited, and everyone else is refused (401 no or unverifiable token, 403 no grant).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { Audit, AuditRecorder } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import { DevIssuer } from "@kubemend/devkit/Issuer"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { Callers } from "../src/Interactive/Callers.ts"

const gatewayToken = "gateway-sa-token"
const otherToken = "other-sa-token"
const controllerToken = "controller-sa-token"
const controller = "system:serviceaccount:kubemend-operator:kubemend-operator"
const gateway = "system:serviceaccount:kubemend-system:kubemend-gateway"

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
          [gatewayToken]: { username: gateway, groups: ["system:serviceaccounts"] },
          [controllerToken]: { username: controller, groups: ["system:serviceaccounts"] },
          [otherToken]: { username: "system:serviceaccount:apps:scraper", groups: ["system:serviceaccounts"] }
        },
        allow: [
          ...[gateway, controller].map((user) => ({ user, verb: "create", resource: "services", name: "kubemend-agent" })),
          { group: "sre", verb: "use", resource: "console" }
        ]
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

    it.effect("a trusted issuer's user without the console grant is refused (403), as the gateway would", () =>
      Effect.gen(function* () {
        const issuer = yield* DevIssuer
        const callers = yield* Callers
        const token = yield* issuer.token({ sub: "u-2", preferred_username: "dave", groups: ["visitors"] })
        const refused = yield* Effect.flip(callers.resolve({ authorization: `Bearer ${token}` }))
        assert.deepStrictEqual([refused.error._tag, refused.user], ["Forbidden", "dave"])
      }))

    it.effect("no token, or a ServiceAccount without agent-client: refused (401, 403) whatever the headers claim", () =>
      Effect.gen(function* () {
        const callers = yield* Callers
        const anonymous = yield* Effect.flip(callers.resolve({ "x-kubemend-user": "dave", "x-kubemend-groups": "sre, ops" }))
        assert.deepStrictEqual([anonymous.error._tag, anonymous.user], ["Unauthenticated", undefined])
        const other = yield* Effect.flip(callers.resolve({ authorization: `Bearer ${otherToken}`, "x-kubemend-user": "erin" }))
        assert.deepStrictEqual([other.error._tag, other.user], ["Forbidden", "system:serviceaccount:apps:scraper"])
      }))

    it.effect("a platform ServiceAccount that is not the gateway is admitted, but its identity headers are ignored and audited", () =>
      Effect.gen(function* () {
        const callers = yield* Callers
        const acting = yield* callers.resolve({ authorization: `Bearer ${controllerToken}`, "x-kubemend-user": "erin" })
        assert.isTrue(Option.isNone(acting.caller))
        assert.isFalse(acting.delegate)
        assert.deepInclude(yield* ignoredClaims, [controller, "erin"])
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
        const control = yield* Effect.flip(callers.resolve({ authorization: `Bearer ${gatewayToken}`, "x-kubemend-user": "eve\u0007" }))
        assert.strictEqual(control.error._tag, "Unauthenticated")
      }))
  })
})
