import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose"
import { make } from "../src/Issuer.ts"
import { defaultAudience } from "@kubemend/core/Auth/Config"

const getJson = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const res = await fetch(url, init)
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any }
  })

const postToken = (url: string, body: string) => getJson(`${url}/dev/token`, { method: "POST", body, headers: { "content-type": "application/json" } })

describe("dev issuer", () => {
  it.scopedLive("serves discovery and a JWKS with an RS256 and an ES256 key", () =>
    Effect.gen(function* () {
      const issuer = yield* make()
      const discovery = yield* getJson(`${issuer.url}/.well-known/openid-configuration`)
      assert.strictEqual(discovery.status, 200)
      assert.strictEqual(discovery.body.issuer, issuer.url)
      assert.strictEqual(discovery.body.jwks_uri, issuer.jwksUrl)
      const jwks = yield* getJson(issuer.jwksUrl)
      assert.deepStrictEqual(jwks.body.keys.map((k: any) => [k.kty, k.alg, k.use]).sort(), [["EC", "ES256", "sig"], ["RSA", "RS256", "sig"]])
      for (const k of jwks.body.keys) assert.isUndefined(k.d, "no private parts published")
    }))

  it.scopedLive("mints persona tokens that verify against its own JWKS with both algorithms", () =>
    Effect.gen(function* () {
      const issuer = yield* make()
      const keys = createRemoteJWKSet(new URL(issuer.jwksUrl))
      for (const alg of ["RS256", "ES256"] as const) {
        const token = yield* issuer.persona("remediation-approver", {}, { alg })
        const { payload, protectedHeader } = yield* Effect.promise(() => jwtVerify(token, keys, { issuer: issuer.url, audience: defaultAudience }))
        assert.strictEqual(protectedHeader.alg, alg)
        assert.strictEqual(payload.preferred_username, "remediation-approver-user")
        assert.deepStrictEqual(payload.groups, ["kubemend-remediation-approver"])
        assert.strictEqual((payload.exp as number) - (payload.iat as number), 3600)
      }
    }))

  it.scopedLive("POST /dev/token fills defaults, removes null claims and honours ?alg", () =>
    Effect.gen(function* () {
      const issuer = yield* make({ audience: "custom-aud" })
      const minted = yield* postToken(issuer.url, JSON.stringify({ preferred_username: "alice", groups: ["g1"], extra: { a: 1 } }))
      assert.strictEqual(minted.status, 200)
      const claims = decodeJwt(minted.body.token)
      assert.strictEqual(claims.sub, "alice")
      assert.strictEqual(claims.aud, "custom-aud")
      assert.strictEqual(claims.iss, issuer.url)
      assert.deepStrictEqual(claims.extra, { a: 1 })
      assert.strictEqual((claims.exp as number) - (claims.iat as number), 3600)

      const noExp = yield* postToken(issuer.url, JSON.stringify({ exp: null }))
      assert.isUndefined(decodeJwt(noExp.body.token).exp)
      assert.strictEqual(decodeJwt(noExp.body.token).sub, "dev-user")

      const es = yield* getJson(`${issuer.url}/dev/token?alg=ES256`, { method: "POST", body: "" })
      assert.strictEqual(decodeProtectedHeader(es.body.token).alg, "ES256")

      assert.strictEqual((yield* postToken(issuer.url, "{oops")).status, 400)
      assert.strictEqual((yield* postToken(issuer.url, "[1,2]")).status, 400)
      assert.strictEqual((yield* postToken(issuer.url, JSON.stringify({ pad: "x".repeat(70_000) }))).status, 413)
      assert.strictEqual((yield* getJson(`${issuer.url}/nope`)).status, 404)
      assert.strictEqual((yield* issuer.requests).token, 6)
    }))

  it.scopedLive("rotates keys, dropping or keeping the old ones", () =>
    Effect.gen(function* () {
      const issuer = yield* make()
      const oldKid = (yield* issuer.currentKey("RS256")).kid
      yield* issuer.rotate({ keepOld: true })
      const kept = (yield* getJson(issuer.jwksUrl)).body.keys.map((k: any) => k.kid)
      assert.strictEqual(kept.length, 4)
      assert.include(kept, oldKid)
      assert.notStrictEqual((yield* issuer.currentKey("RS256")).kid, oldKid)
      yield* issuer.rotate()
      const dropped = (yield* getJson(issuer.jwksUrl)).body.keys.map((k: any) => k.kid)
      assert.strictEqual(dropped.length, 2)
      assert.notInclude(dropped, oldKid)
    }))

  it.scopedLive("injects JWKS faults", () =>
    Effect.gen(function* () {
      const issuer = yield* make()
      yield* issuer.setJwksFault("error")
      assert.strictEqual((yield* getJson(issuer.jwksUrl)).status, 503)
      yield* issuer.setJwksFault("garbage")
      const garbage = yield* Effect.promise(() => fetch(issuer.jwksUrl).then((r) => r.text()))
      assert.strictEqual(garbage, "{not json")
      yield* issuer.setJwksFault("none")
      assert.strictEqual((yield* getJson(issuer.jwksUrl)).status, 200)
      assert.strictEqual((yield* issuer.requests).jwks, 3)
    }))

  it.scopedLive("bad-token helpers produce the advertised flaws", () =>
    Effect.gen(function* () {
      const issuer = yield* make()
      const now = Math.floor(Date.now() / 1000)
      assert.isBelow(decodeJwt(yield* issuer.bad.expired).exp!, now)
      assert.isAbove(decodeJwt(yield* issuer.bad.futureNbf).nbf!, now + 60)
      assert.isUndefined(decodeJwt(yield* issuer.bad.missingExp).exp)
      assert.strictEqual(decodeJwt(yield* issuer.bad.wrongAudience).aud, "another-service")
      assert.notStrictEqual(decodeJwt(yield* issuer.bad.wrongIssuer).iss, issuer.url)
      assert.strictEqual(decodeProtectedHeader(yield* issuer.bad.hs256WithPublicKey).alg, "HS256")
      const none = yield* issuer.bad.algNone("NoNe")
      assert.strictEqual(decodeProtectedHeader(none).alg, "NoNe")
      assert.isTrue(none.endsWith("."))
      assert.strictEqual(decodeProtectedHeader(yield* issuer.bad.unknownKid("../../etc/passwd")).kid, "../../etc/passwd")
      const psychic = yield* issuer.bad.psychicEcdsa
      assert.strictEqual(psychic.split(".")[2], "A".repeat(86))
      assert.property(decodeProtectedHeader(yield* issuer.bad.embeddedJwk), "jwk")
      assert.strictEqual(decodeProtectedHeader(yield* issuer.bad.jku("http://127.0.0.1:1/k")).jku, "http://127.0.0.1:1/k")
      assert.isTrue((yield* issuer.bad.emptySignature).endsWith("."))
      assert.isAbove((yield* issuer.bad.oversized()).length, 8192)
    }))
})
