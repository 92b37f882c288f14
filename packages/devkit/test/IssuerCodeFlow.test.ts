import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { createRemoteJWKSet, jwtVerify } from "jose"
import { make } from "../src/Issuer.ts"

const client = { id: "console", secret: "s3cret" }
const verifier = "a-verifier-of-at-least-forty-three-characters-long"
const challenge = createHash("sha256").update(verifier).digest("base64url")
const redirect = "http://127.0.0.1:9/cb"

const authorizeQuery = (extra: Record<string, string> = {}) =>
  new URLSearchParams({
    response_type: "code",
    client_id: client.id,
    redirect_uri: redirect,
    state: "st",
    nonce: "n0",
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "openid",
    ...extra
  })

const post = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const res = await fetch(url, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams(form).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers }
    })
    return { status: res.status, location: res.headers.get("location"), body: (await res.json().catch(() => undefined)) as any }
  })

/** Picks `persona` on the login page; the code it redirects back with. */
const codeFor = (url: string, persona: string) =>
  Effect.map(post(`${url}/authorize`, { ...Object.fromEntries(authorizeQuery()), persona }), (r) => {
    const back = new URL(r.location!)
    assert.strictEqual(back.origin + back.pathname, redirect)
    assert.strictEqual(back.searchParams.get("state"), "st")
    assert.strictEqual(back.searchParams.get("iss"), url)
    return back.searchParams.get("code")!
  })

const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`

describe("dev issuer code flow", () => {
  it.scopedLive("the login page lists the personas; a pick trades for tokens with PKCE; refresh works", () =>
    Effect.gen(function* () {
      const issuer = yield* make({ clients: { [client.id]: client.secret } })
      const discovery = yield* Effect.promise(() => fetch(`${issuer.url}/.well-known/openid-configuration`).then((r) => r.json() as Promise<any>))
      assert.strictEqual(discovery.authorization_endpoint, `${issuer.url}/authorize`)
      assert.deepStrictEqual(discovery.code_challenge_methods_supported, ["S256"])
      const page = yield* Effect.promise(() => fetch(`${issuer.url}/authorize?${authorizeQuery()}`).then((r) => r.text()))
      for (const p of ["sre", "remediation-approver", "no-console"]) assert.include(page, `value="${p}"`)

      const code = yield* codeFor(issuer.url, "l3-audit")
      const tokens = yield* post(`${issuer.url}/token`, { grant_type: "authorization_code", code, redirect_uri: redirect, code_verifier: verifier }, {
        authorization: basic
      })
      assert.strictEqual(tokens.status, 200)
      const keys = createRemoteJWKSet(new URL(issuer.jwksUrl))
      const access = yield* Effect.promise(() => jwtVerify(tokens.body.access_token, keys, { issuer: issuer.url, audience: issuer.audience }))
      assert.deepStrictEqual(access.payload.groups, ["kubemend-l3-audit"])
      const id = yield* Effect.promise(() => jwtVerify(tokens.body.id_token, keys, { issuer: issuer.url, audience: client.id }))
      assert.strictEqual(id.payload.nonce, "n0")

      const refreshed = yield* post(`${issuer.url}/token`, {
        grant_type: "refresh_token",
        refresh_token: tokens.body.refresh_token,
        client_id: client.id,
        client_secret: client.secret
      })
      assert.strictEqual(refreshed.status, 200)
      assert.strictEqual((yield* Effect.promise(() => jwtVerify(refreshed.body.access_token, keys))).payload.sub, "l3-audit-user")
    }))

  it.scopedLive("refuses a wrong verifier, a reused code, another redirect, a wrong secret and a missing PKCE challenge", () =>
    Effect.gen(function* () {
      const issuer = yield* make({ clients: { [client.id]: client.secret } })
      const trade = (code: string, extra: Record<string, string> = {}, auth = basic) =>
        post(`${issuer.url}/token`, { grant_type: "authorization_code", code, redirect_uri: redirect, code_verifier: verifier, ...extra }, {
          authorization: auth
        })

      const wrongVerifier = yield* trade(yield* codeFor(issuer.url, "sre"), { code_verifier: "x".repeat(43) })
      assert.deepStrictEqual([wrongVerifier.status, wrongVerifier.body.error], [400, "invalid_grant"])
      const code = yield* codeFor(issuer.url, "sre")
      assert.strictEqual((yield* trade(code)).status, 200)
      assert.strictEqual((yield* trade(code)).body.error, "invalid_grant", "a code is good once")
      const otherRedirect = yield* trade(yield* codeFor(issuer.url, "sre"), { redirect_uri: "http://127.0.0.1:9/other" })
      assert.strictEqual(otherRedirect.body.error, "invalid_grant")
      const wrongSecret = yield* trade(yield* codeFor(issuer.url, "sre"), {}, `Basic ${Buffer.from(`${client.id}:nope`).toString("base64")}`)
      assert.deepStrictEqual([wrongSecret.status, wrongSecret.body.error], [401, "invalid_client"])

      const noPkce = yield* Effect.promise(() => fetch(`${issuer.url}/authorize?${authorizeQuery({ code_challenge_method: "plain" })}`))
      assert.strictEqual(noPkce.status, 400)
      const unknownClient = yield* Effect.promise(() => fetch(`${issuer.url}/authorize?${authorizeQuery({ client_id: "stranger" })}`))
      assert.strictEqual(unknownClient.status, 400)
    }))
})
