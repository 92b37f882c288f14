import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Clock, ConfigProvider, Duration, Effect, Exit, Fiber, Layer, Option, TestClock } from "effect"
import { Auth, AuthConfig, authConfig, defaultAudience } from "../src/Auth.ts"
import type { AuthConfigShape, JwtProvider } from "../src/Auth.ts"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import type { DevIssuerService } from "@kubemend/devkit/Issuer"
import { K8s, K8sUnavailable } from "../src/K8s.ts"
import type { K8sService } from "../src/K8s.ts"

/** Only TokenReview is used by Auth; any other call is a test bug. */
const k8sLayer = (tokenReview: K8sService["tokenReview"]) =>
  Layer.succeed(
    K8s,
    new Proxy({ namespace: "kubemend", apiGroup: "kubemend.io", tokenReview }, {
      get: (target, prop) => prop in target ? target[prop as keyof typeof target] : () => Effect.die(`unexpected K8s.${String(prop)}`)
    }) as unknown as K8sService
  )

const noReview = k8sLayer(() => Effect.die("unexpected tokenReview"))

const provider = (issuer: DevIssuerService, extra: Partial<JwtProvider> = {}): JwtProvider => ({
  name: "dev",
  issuerURL: issuer.url,
  audiences: [issuer.audience],
  ...extra
})

const withAuth = <A, E, R>(
  config: Partial<AuthConfigShape>,
  body: (auth: Auth) => Effect.Effect<A, E, R>,
  k8s = noReview
) =>
  Effect.flatMap(Auth, body).pipe(
    Effect.provide(Auth.Default.pipe(
      Layer.provide(AuthConfig.layer({ allowInsecureIssuers: true, ...config })),
      Layer.provide(k8s)
    ))
  )

const bearer = (token: string) => `Bearer ${token}`
/** The failure reason, or "ok". */
const outcome = (auth: Auth, header: string | undefined) =>
  auth.authenticate(header).pipe(
    Effect.map(() => "ok"),
    Effect.catchTag("Unauthenticated", (e) => Effect.succeed(e.reason))
  )

/** Real wall time under TestClock, so the issuer's and the verifier's clocks agree with jose's date math. */
const realNow = TestClock.setTime(Date.now())

/** Waits (in real time) until a fiber is parked on a TestClock sleep. */
const untilSleeping = Effect.gen(function* () {
  for (let i = 0; i < 400; i++) {
    if (Chunk.size(yield* TestClock.sleeps()) > 0) return
    yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
  }
  throw new Error("no fiber went to sleep")
})

describe("Auth against the dev issuer", () => {
  it.scoped("accepts RS256 and ES256 persona tokens and builds the principal", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      yield* withAuth({ providers: [provider(issuer)] }, (auth) =>
        Effect.gen(function* () {
          for (const alg of ["RS256", "ES256"] as const) {
            const p = yield* auth.authenticate(bearer(yield* issuer.persona("sre", {}, { alg })))
            assert.strictEqual(p.user, "sre-user")
            assert.deepStrictEqual(p.groups, ["kubemend-sre"])
            assert.strictEqual(p.issuer, issuer.url)
            assert.strictEqual(p.subject, "sre-user")
            assert.strictEqual(p.tokenKind, "jwt")
            assert.closeTo(p.expiresAt.getTime(), Date.now() + 3600_000, 5_000)
          }
          // lower-case scheme is fine (RFC 7235: the scheme is case-insensitive)
          assert.strictEqual(yield* outcome(auth, `bearer ${yield* issuer.persona("cicd")}`), "ok")
          const counts = yield* issuer.requests
          assert.deepStrictEqual([counts.discovery, counts.jwks], [1, 1])
        }))
    }))

  it.scoped("rejects cases 1-4: alg none, HS256 confusion, psychic ECDSA, embedded keys and key URLs", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      let keyUrlHits = 0
      const trap = createServer((_req, res) => {
        keyUrlHits++
        res.end("{}")
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void trap.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.async<void>((resume) => void trap.close(() => resume(Effect.void)))
      )
      const trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}/keys`
      yield* withAuth({ providers: [provider(issuer)] }, (auth) =>
        Effect.gen(function* () {
          for (const spelling of ["none", "None", "NONE", "nOnE"]) {
            assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.algNone(spelling))), "unsupported_algorithm")
          }
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.emptySignature)), "invalid_signature")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.hs256WithPublicKey)), "unsupported_algorithm")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.psychicEcdsa)), "invalid_signature")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.embeddedJwk)), "invalid_signature")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.jku(trapUrl))), "invalid_signature")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.x5u(trapUrl))), "invalid_signature")
          // a good token still works afterwards
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre"))), "ok")
        }))
      assert.strictEqual(keyUrlHits, 0, "jku/x5u URLs are never fetched")
    }))

  it.scoped("case 5: hostile or unknown kids are rejected and refresh the JWKS at most once per cooldown", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      yield* withAuth({ providers: [provider(issuer, { jwksURL: issuer.jwksUrl })] }, (auth) =>
        Effect.gen(function* () {
          const jwksFetches = Effect.map(issuer.requests, (c) => c.jwks)
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre"))), "ok")
          for (const kid of ["../../etc/passwd", "' OR 1=1 --", "unknown-1", "unknown-2", undefined]) {
            assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.unknownKid(kid))), "invalid_signature")
          }
          assert.strictEqual(yield* jwksFetches, 1, "within the cooldown of the first fetch")

          yield* TestClock.adjust("31 seconds")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.unknownKid())), "invalid_signature")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.unknownKid())), "invalid_signature")
          assert.strictEqual(yield* jwksFetches, 2, "one refresh per cooldown")

          // A rotated key is picked up on the first unknown kid after the cooldown.
          yield* issuer.rotate()
          const rotated = yield* issuer.persona("sre")
          assert.strictEqual(yield* outcome(auth, bearer(rotated)), "invalid_signature")
          yield* TestClock.adjust("31 seconds")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre"))), "ok")
          assert.strictEqual(yield* jwksFetches, 3)
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre", {}, { alg: "ES256" }))), "ok")
          assert.strictEqual(yield* jwksFetches, 3, "known kids make no request")
        }))
    }))

  it.scoped("case 6: expiry and time claims", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      yield* withAuth({ providers: [provider(issuer)] }, (auth) =>
        Effect.gen(function* () {
          const check = (claims: Record<string, unknown>) => Effect.flatMap(issuer.persona("sre", claims), (t) => outcome(auth, bearer(t)))
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.expired)), "token_expired")
          assert.strictEqual(yield* check({ exp: now - 1 }), "token_expired", "no leeway on exp")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.missingExp)), "missing_expiry")
          assert.strictEqual(yield* check({ exp: "tomorrow" }), "malformed_token")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.futureNbf)), "not_yet_valid")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.futureIat)), "not_yet_valid")
          assert.strictEqual(yield* check({ nbf: now + 61 }), "not_yet_valid")
          assert.strictEqual(yield* check({ nbf: now + 30, iat: now + 30 }), "ok", "within the 60 s skew")
        }))
    }))

  it.scoped("case 7: wrong issuer, foreign audience, a token for another service", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      const other = yield* makeIssuer({ audience: "billing" })
      yield* withAuth({ providers: [provider(issuer, { audiences: [defaultAudience, "kubemend-ci"] })] }, (auth) =>
        Effect.gen(function* () {
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.wrongIssuer)), "unknown_issuer")
          assert.strictEqual(yield* outcome(auth, bearer(yield* other.persona("sre"))), "unknown_issuer")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.bad.wrongAudience)), "invalid_audience")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre", { aud: null }))), "invalid_audience")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre", { aud: ["x", "kubemend-ci"] }))), "ok")
          // signed by another issuer's key while claiming ours
          assert.strictEqual(yield* outcome(auth, bearer(yield* other.persona("sre", { iss: issuer.url, aud: defaultAudience }))), "invalid_signature")
        }))
    }))

  it.scoped("case 8: size limit, malformed tokens, headers and control characters", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      yield* withAuth({ providers: [provider(issuer)] }, (auth) =>
        Effect.gen(function* () {
          const good = yield* issuer.persona("sre")
          const [h, p] = good.split(".")
          const cases: ReadonlyArray<[string | undefined, string]> = [
            [undefined, "missing_header"],
            ["", "missing_header"],
            ["Basic dXNlcjpwYXNz", "non_bearer"],
            ["Bearer", "non_bearer"],
            ["Bearer   ", "malformed_token"],
            [`Bearer ${good}\u0000`, "control_chars"],
            [bearer(yield* issuer.bad.oversized()), "token_too_large"],
            ["Bearer abc", "malformed_token"],
            ["Bearer a.b", "malformed_token"],
            ["Bearer !!!.@@@.###", "malformed_token"],
            [`Bearer ${h}.${Buffer.from("{not json").toString("base64url")}.sig`, "malformed_token"],
            [`Bearer ${Buffer.from("[]").toString("base64url")}.${p}.sig`, "malformed_token"],
            [`Bearer ${h}.${Buffer.from("{\"sub\":\"x\"}").toString("base64url")}.sig`, "malformed_token"]
          ]
          for (const [header, reason] of cases) assert.strictEqual(yield* outcome(auth, header), reason, String(header).slice(0, 40))
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre", { preferred_username: "bad\u0007name" }))), "control_chars")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre", { groups: ["ok", "bad\nline"] }))), "control_chars")
          assert.strictEqual(yield* outcome(auth, bearer(yield* issuer.persona("sre", { groups: "not-a-list" }))), "malformed_token")
        }))
    }))

  it.scoped("case 9: JWKS down -> last good keys serve for the stale TTL, then fail closed; recovers", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      yield* withAuth({ providers: [provider(issuer)] }, (auth) =>
        Effect.gen(function* () {
          const fresh = () => Effect.flatMap(issuer.persona("sre"), (t) => outcome(auth, bearer(t)))
          assert.strictEqual(yield* fresh(), "ok")
          yield* issuer.setJwksFault("error")
          yield* TestClock.adjust("6 minutes")
          assert.strictEqual(yield* fresh(), "ok", "refresh failed, last good keys serve")
          yield* issuer.setJwksFault("garbage")
          yield* TestClock.adjust("3 minutes")
          assert.strictEqual(yield* fresh(), "ok")
          assert.strictEqual((yield* issuer.requests).jwks, 3)
          yield* TestClock.adjust("61 seconds")
          assert.strictEqual(yield* fresh(), "jwks_unavailable", "keys older than 10 minutes are not trusted")
          assert.strictEqual(yield* fresh(), "jwks_unavailable")
          assert.strictEqual((yield* issuer.requests).jwks, 4, "no retry inside the cooldown")
          yield* issuer.setJwksFault("none")
          yield* TestClock.adjust("31 seconds")
          assert.strictEqual(yield* fresh(), "ok", "recovered after the cooldown")
        }))
    }))

  it.scoped("case 9: a JWKS that never answers times out and fails closed", () =>
    Effect.gen(function* () {
      yield* realNow
      const issuer = yield* makeIssuer()
      yield* issuer.setJwksFault("hang")
      yield* withAuth({ providers: [provider(issuer)] }, (auth) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.fork(outcome(auth, bearer(yield* issuer.persona("sre"))))
          yield* untilSleeping
          yield* TestClock.adjust("5 seconds")
          assert.strictEqual(yield* Fiber.join(fiber), "jwks_unavailable")
        }))
    }))

  it.scoped("accepts tokens from two issuers with different claim mappings", () =>
    Effect.gen(function* () {
      yield* realNow
      const corp = yield* makeIssuer()
      const ci = yield* makeIssuer({ audience: "kubemend-ci" })
      const providers: ReadonlyArray<JwtProvider> = [
        provider(corp, { name: "corp", claimMappings: { username: "user.login", groups: "realm_access.roles" } }),
        { name: "ci", issuerURL: `${ci.url}/`, jwksURL: ci.jwksUrl, audiences: ["other", "kubemend-ci"] }
      ]
      yield* withAuth({ providers }, (auth) =>
        Effect.gen(function* () {
          const a = yield* auth.authenticate(bearer(
            yield* corp.token({
              sub: "u-123",
              preferred_username: "ignored",
              user: { login: "alice" },
              realm_access: { roles: ["r1", "r2"] },
              groups: ["not-used"]
            })
          ))
          assert.deepStrictEqual([a.user, a.groups, a.subject, a.issuer], ["alice", ["r1", "r2"], "u-123", corp.url])
          const fallback = yield* auth.authenticate(bearer(yield* corp.token({ preferred_username: "bob", user: { login: "" } })))
          assert.deepStrictEqual([fallback.user, fallback.groups], ["bob", []])
          const viaSub = yield* auth.authenticate(bearer(yield* corp.token({ sub: "svc-1", preferred_username: null, __proto__x: 1 })))
          assert.strictEqual(viaSub.user, "svc-1")
          const b = yield* auth.authenticate(bearer(yield* ci.persona("cicd", { iss: `${ci.url}/` }, { alg: "ES256" })))
          assert.deepStrictEqual([b.user, b.groups], ["cicd-user", ["kubemend-cicd"]])
          // B's audience is not A's
          assert.strictEqual(yield* outcome(auth, bearer(yield* corp.persona("sre", { aud: "kubemend-ci" }))), "invalid_audience")
          assert.strictEqual((yield* corp.requests).discovery, 1)
          assert.strictEqual((yield* ci.requests).discovery, 0, "jwksURL bypasses discovery")
        }))
    }))

  it.scoped("requires https issuers unless insecure issuers are allowed", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(withAuth(
        { allowInsecureIssuers: false, providers: [{ name: "x", issuerURL: "http://127.0.0.1:1", audiences: ["a"] }] },
        () => Effect.void
      ))
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(exit), /must use https/)
      const ok = yield* Effect.exit(withAuth(
        { allowInsecureIssuers: false, providers: [{ name: "x", issuerURL: "https://idp.example.com", audiences: ["a"] }] },
        () => Effect.void
      ))
      assert.isTrue(Exit.isSuccess(ok))
    }))

  it.effect("authenticates ServiceAccount tokens through TokenReview", () =>
    Effect.gen(function* () {
      const k8s = k8sLayer((token) =>
        token === "down"
          ? Effect.fail(new K8sUnavailable({ message: "connection refused" }))
          : Effect.succeed(
            token === "sa-token"
              ? Option.some({ username: "system:serviceaccount:kubemend:gateway", uid: "u1", groups: ["system:serviceaccounts"] })
              : Option.none()
          )
      )
      yield* withAuth({}, (auth) =>
        Effect.gen(function* () {
          const p = yield* auth.authenticateServiceAccount("Bearer sa-token")
          assert.deepStrictEqual(
            [p.user, p.groups, p.tokenKind, p.subject, p.issuer],
            ["system:serviceaccount:kubemend:gateway", ["system:serviceaccounts"], "serviceaccount", "u1", "kubernetes"]
          )
          const rejected = yield* Effect.flip(auth.authenticateServiceAccount("Bearer forged"))
          assert.strictEqual(rejected._tag === "Unauthenticated" && rejected.reason, "token_review_failed")
          const missing = yield* Effect.flip(auth.authenticateServiceAccount(undefined))
          assert.strictEqual(missing._tag === "Unauthenticated" && missing.reason, "missing_header")
          const down = yield* Effect.flip(auth.authenticateServiceAccount("Bearer down"))
          assert.strictEqual(down._tag, "DependencyUnavailable")
        }), k8s)
    }))

  it.effect("reads document 3: the single apiFrontend.auth issuer and jwtProviders[] both become providers", () =>
    Effect.gen(function* () {
      const config = yield* authConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromJson({
        issuerURL: "https://idp.example.com",
        jwksURL: "https://idp.example.com/keys",
        jwtProviders: [{ name: "ci", issuerURL: "https://ci.example.com", audiences: ["a", "b"], claimMappings: { username: "user.login" } }],
        jwksRefreshCooldown: "45s"
      })))
      assert.deepStrictEqual(config.providers, [
        { name: "default", issuerURL: "https://idp.example.com", audiences: [defaultAudience], jwksURL: "https://idp.example.com/keys" },
        { name: "ci", issuerURL: "https://ci.example.com", audiences: ["a", "b"], claimMappings: { username: "user.login" } }
      ])
      assert.isTrue(Duration.equals(config.jwksRefreshCooldown, Duration.seconds(45)))
      assert.isFalse(config.allowInsecureIssuers)
      const empty = yield* authConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromJson({})))
      assert.deepStrictEqual(empty.providers, [])
    }))

  it.effect("layerStatic maps known test tokens to principals", () =>
    Effect.gen(function* () {
      const principal = { user: "u", groups: ["g"], issuer: "test", expiresAt: new Date(0), subject: "u", tokenKind: "jwt" as const }
      const auth = yield* Effect.provide(Auth, Auth.layerStatic({ "tok-1": principal }))
      assert.deepStrictEqual(yield* auth.authenticate("Bearer tok-1"), principal)
      assert.strictEqual((yield* Effect.flip(auth.authenticate("Bearer other"))).reason, "invalid_signature")
      assert.strictEqual((yield* Effect.flip(auth.authenticate(undefined))).reason, "missing_header")
    }))
})
