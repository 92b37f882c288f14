import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { AuthConfig } from "@kubemend/core/Auth"
import { DevIssuer } from "@kubemend/core/devkit/Issuer"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { Callers } from "../src/Interactive/Callers.ts"

const JwtCallers = Layer.unwrapEffect(
  Effect.map(DevIssuer, (issuer) =>
    Callers.layerConfig.pipe(
      Layer.provide(AuthConfig.layer({
        providers: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }],
        allowInsecureIssuers: true
      })),
      Layer.provide(K8sMemory.layer({ namespace: "kubemend-system" }))
    ))
).pipe(Layer.provideMerge(DevIssuer.layer()))

describe("interactive callers", () => {
  layer(JwtCallers, { excludeTestServices: true })("with jwtProviders", (it) => {
    it.effect("a bearer JWT of a trusted issuer names the caller; a forged one is refused", () =>
      Effect.gen(function* () {
        const issuer = yield* DevIssuer
        const callers = yield* Callers
        const token = yield* issuer.token({ sub: "u-1", preferred_username: "carol", groups: ["sre"] })
        const caller = yield* callers.resolve({ authorization: `Bearer ${token}`, "x-kubemend-user": "mallory" })
        assert.deepStrictEqual(Option.getOrThrow(caller), { user: "carol", groups: ["sre"], via: "jwt" })
        const forged = yield* Effect.either(callers.resolve({ authorization: `Bearer ${token.slice(0, -4)}AAAA` }))
        assert.isTrue(Either.isLeft(forged))
        const headers = yield* callers.resolve({ "x-kubemend-user": "dave", "x-kubemend-groups": "sre, ops" })
        assert.deepStrictEqual(Option.getOrThrow(headers), { user: "dave", groups: ["sre", "ops"], via: "header" })
      }))
  })

  layer(Callers.layerHeaders)("gateway headers", (it) => {
    it.effect("identity headers with control characters are refused", () =>
      Effect.gen(function* () {
        const callers = yield* Callers
        assert.isTrue(Option.isNone(yield* callers.resolve({})))
        assert.isTrue(Either.isLeft(yield* Effect.either(callers.resolve({ "x-kubemend-user": "eve\u0007" }))))
      }))
  })
})
