/**
 * The gateway's last line: a defect anywhere under the API app answers a problem+json 500 without internals (the
 * platform alone sends an empty 500 and logs nothing), while a failure it knows, an unknown route, stays a 404.
 */
import { HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { internalErrors } from "../src/Http.ts"

const answer = async (app: HttpApp.Default<unknown>) => {
  const res = await HttpApp.toWebHandler(internalErrors(app))(new Request("http://gateway.test/a2a/invoke", { method: "POST" }))
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
}

describe("defects under the API app", () => {
  it("a defect is a problem+json 500 that says nothing of it", async () => {
    const res = await answer(Effect.die(new Error("secret stack detail")))
    expect(res.status).toBe(500)
    expect(res.type).toBe("application/problem+json")
    expect(JSON.parse(res.text)).toMatchObject({ type: "https://kubemend.io/problems/internal-error", status: 500, instance: "/a2a/invoke" })
    expect(res.text).not.toContain("secret")
  })

  it("an unknown route is still a 404, and a good answer passes untouched", async () => {
    const notFound = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.fail(new HttpServerError.RouteNotFound({ request })))
    expect((await answer(notFound)).status).toBe(404)
    expect(await answer(Effect.succeed(HttpServerResponse.text("ok", { status: 202 })))).toMatchObject({ status: 202, text: "ok" })
  })
})
