import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { createRemoteJWKSet, jwtVerify } from "jose"
import { makeBrowser } from "./Browser.ts"
import { Harness, harness } from "./Harness.ts"

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Signs in as `persona` from a deep link; the browser and its last hop. */
const signIn = (url: string, persona: string) =>
  promise(async () => {
    const browser = makeBrowser()
    const last = await browser.navigate(`${url}/remediations?x=1`, persona)
    return { browser, last }
  })

layer(harness(), { excludeTestServices: true })("console server", (it) => {
  it.effect("signs in through the dev issuer with PKCE and lands on the deep link; the session cookie is sealed and HttpOnly", () =>
    Effect.gen(function* () {
      const { url, issuer } = yield* Harness
      const { browser, last } = yield* signIn(url, "sre")
      assert.strictEqual(last.status, 200)
      assert.include(last.body, "<title>Kubemend console</title>")
      assert.strictEqual(new URL(last.url).pathname + new URL(last.url).search, "/remediations?x=1")
      const authorize = browser.seen.find((h) => h.url.startsWith(`${issuer.url}/authorize`))!
      const params = new URL(authorize.url).searchParams
      assert.strictEqual(params.get("code_challenge_method"), "S256")
      assert.isNotEmpty(params.get("state"))
      assert.isNotEmpty(params.get("nonce"))
      const callback = browser.seen.find((h) => h.url.includes("/oauth2/callback"))!
      const set = callback.headers.getSetCookie().find((c) => c.startsWith("kubemend_session="))!
      assert.match(set, /HttpOnly/)
      assert.match(set, /SameSite=Lax/)
      assert.notMatch(set, /Secure/, "no Secure flag on a plain-http console")
      const me = yield* promise(() => browser.request(`${url}/oauth2/userinfo`))
      assert.deepStrictEqual(JSON.parse(me.body).user, "sre-user")
    }))

  it.effect("the proxy sends the session's token as the bearer, never the browser's cookie or Authorization; no token reaches the browser", () =>
    Effect.gen(function* () {
      const { url, issuer } = yield* Harness
      const { browser } = yield* signIn(url, "remediation-approver")
      const echoed = yield* promise(() =>
        browser.request(`${url}/a2a/invoke`, {
          method: "POST",
          body: "{\"jsonrpc\":\"2.0\"}",
          headers: { authorization: "Bearer forged", "content-type": "application/json" }
        })
      )
      assert.strictEqual(echoed.status, 200)
      const seen = JSON.parse(echoed.body)
      assert.strictEqual(seen.url, "/a2a/invoke")
      assert.strictEqual(seen.body, "{\"jsonrpc\":\"2.0\"}")
      assert.isUndefined(seen.headers.cookie)
      const token = String(seen.headers.authorization).replace(/^Bearer /, "")
      const { payload } = yield* promise(() => jwtVerify(token, createRemoteJWKSet(new URL(issuer.jwksUrl)), { issuer: issuer.url }))
      assert.strictEqual(payload.preferred_username, "remediation-approver-user")
      assert.isUndefined(echoed.headers.get("set-cookie") ?? undefined, "the upstream's cookies stay behind the proxy")
      assert.match(seen.headers["x-forwarded-for"], /127\.0\.0\.1/)
      for (const hop of browser.seen) {
        const visible = hop.body + JSON.stringify([...hop.headers.entries()]) + hop.url
        // The echo above shows what the gateway got; it is the one answer that may repeat it.
        if (hop !== browser.seen.at(-1)) assert.notInclude(visible, token, `token in ${hop.url}`)
      }
    }))

  it.effect("an SSE answer reaches the browser event by event, not when the stream ends", () =>
    Effect.gen(function* () {
      const { url, upstream } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const cookie = [...browser.jar.entries()].map(([n, c]) => `${n}=${c.value}`).join("; ")
      const res = yield* promise(() => fetch(`${url}/a2a/stream`, { method: "POST", headers: { cookie } }))
      assert.strictEqual(res.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(res.headers.get("x-accel-buffering"), "no")
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
      // The first event arrives while the upstream still holds the second: nothing was buffered.
      const first = yield* promise(() => reader.read()).pipe(Effect.timeout(Duration.seconds(5)))
      assert.include(first.value, "{\"n\":1}")
      assert.notInclude(first.value, "{\"n\":2}")
      yield* upstream.release
      let rest = ""
      for (;;) {
        const { done, value } = yield* promise(() => reader.read())
        if (done) break
        rest += value
      }
      assert.include(rest, "{\"n\":2}")
    }))

  it.effect("/mcp answers 504 when the gateway is silent past its timeout; unauthenticated API calls get 401", () =>
    Effect.gen(function* () {
      const { url } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const slow = yield* promise(() => browser.request(`${url}/mcp`, { method: "POST", body: "{}" }))
      assert.strictEqual(slow.status, 504)
      assert.strictEqual(slow.headers.get("content-type"), "application/problem+json")
      assert.strictEqual(JSON.parse(slow.body).status, 504)
      const anonymous = yield* promise(() => fetch(`${url}/a2a/invoke`, { method: "POST", body: "{}" }))
      assert.strictEqual(anonymous.status, 401)
    }))

  it.effect("a tampered or foreign session cookie is refused", () =>
    Effect.gen(function* () {
      const { url } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const value = browser.jar.get("kubemend_session")!.value
      const flipped = value.slice(0, -8) + (value.at(-8) === "A" ? "B" : "A") + value.slice(-7)
      for (const cookie of [`kubemend_session=${flipped}`, "kubemend_session=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z"]) {
        const res = yield* promise(() => fetch(`${url}/oauth2/userinfo`, { headers: { cookie } }))
        assert.strictEqual(res.status, 401)
      }
    }))

  it.effect("every answer carries the CSP, frame and sniffing headers; no HSTS over plain http; the SPA answers deep paths", () =>
    Effect.gen(function* () {
      const { url } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const page = yield* promise(() => browser.request(`${url}/approvals/some/deep/path`))
      const asset = yield* promise(() => fetch(`${url}/assets/app-1.js`))
      const missing = yield* promise(() => fetch(`${url}/assets/nope.js`))
      const proxied = yield* promise(() => browser.request(`${url}/a2a/invoke`, { method: "POST", body: "{}" }))
      const health = yield* promise(() => fetch(`${url}/healthz`))
      assert.include(page.body, "<title>Kubemend console</title>")
      assert.strictEqual(asset.headers.get("cache-control"), "public, max-age=31536000, immutable")
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(yield* promise(() => health.text()), "ok")
      for (const headers of [page.headers, asset.headers, proxied.headers, health.headers]) {
        assert.match(headers.get("content-security-policy") ?? "", /script-src 'self'(;|$)/)
        assert.match(headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/)
        assert.strictEqual(headers.get("x-frame-options"), "DENY")
        assert.strictEqual(headers.get("x-content-type-options"), "nosniff")
        assert.isNull(headers.get("strict-transport-security"))
      }
    }))

  it.effect("/.well-known/ passes through unmodified without a session", () =>
    Effect.gen(function* () {
      const { url } = yield* Harness
      const res = yield* promise(() => fetch(`${url}/.well-known/agent-card.json?x=1`))
      const seen = JSON.parse(yield* promise(() => res.text()))
      assert.strictEqual(seen.url, "/.well-known/agent-card.json?x=1")
      assert.isUndefined(seen.headers.authorization)
    }))

  it.effect("a callback without the sign-in's cookie, or with a code already used, is refused", () =>
    Effect.gen(function* () {
      const { url } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const callback = browser.seen.find((h) => h.url.includes("/oauth2/callback"))!
      const stranger = yield* promise(() => fetch(callback.url, { redirect: "manual" }))
      assert.strictEqual(stranger.status, 401)
      assert.include(yield* promise(() => stranger.text()), "Sign-in failed")
    }))

  it.effect("sign-out clears the session and sends the browser to the issuer's end-session endpoint", () =>
    Effect.gen(function* () {
      const { url, issuer } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const out = yield* promise(() => browser.request(`${url}/oauth2/sign_out`, { method: "POST" }))
      const location = new URL(JSON.parse(out.body).location)
      assert.strictEqual(location.origin + location.pathname, `${issuer.url}/logout`)
      assert.strictEqual(location.searchParams.get("post_logout_redirect_uri"), `${url}/`)
      assert.isFalse(browser.jar.has("kubemend_session"))
      const me = yield* promise(() => browser.request(`${url}/oauth2/userinfo`))
      assert.strictEqual(me.status, 401)
    }))
})

layer(harness({ refreshBefore: Duration.hours(2) }), { excludeTestServices: true })("console session refresh", (it) => {
  it.effect("a token expiring within refreshBefore is refreshed through the issuer and the cookie rewritten", () =>
    Effect.gen(function* () {
      const { url } = yield* Harness
      const { browser } = yield* signIn(url, "sre")
      const before = browser.jar.get("kubemend_session")!.value
      const res = yield* promise(() => browser.request(`${url}/a2a/invoke`, { method: "POST", body: "{}" }))
      assert.strictEqual(res.status, 200)
      assert.isDefined(res.headers.getSetCookie().find((c) => c.startsWith("kubemend_session=")))
      assert.notStrictEqual(browser.jar.get("kubemend_session")!.value, before)
      const me = yield* promise(() => browser.request(`${url}/oauth2/userinfo`))
      assert.strictEqual(JSON.parse(me.body).user, "sre-user")
    }))
})
