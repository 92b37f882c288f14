/**
 * The gateway's last line: a defect anywhere under the API app answers a problem+json 500 without internals, and an
 * unknown route a problem+json 404 (the platform alone sends empty bodies, and logs nothing for the defect).
 */
import { HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { lastAnswers } from "@kubemend/core/HttpProblems"

const answer = async (app: HttpApp.Default<unknown>) => {
  const res = await HttpApp.toWebHandler(lastAnswers(app))(new Request("http://gateway.test/a2a/invoke", { method: "POST" }))
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
}

describe("what the gateway's routers leave unanswered", () => {
  it("a defect is a problem+json 500 that says nothing of it", async () => {
    const res = await answer(Effect.die(new Error("secret stack detail")))
    expect(res.status).toBe(500)
    expect(res.type).toBe("application/problem+json")
    expect(JSON.parse(res.text)).toMatchObject({ type: "https://kubemend.io/problems/internal-error", status: 500, instance: "/a2a/invoke" })
    expect(res.text).not.toContain("secret")
  })

  it("an unknown route is a problem+json 404, and a good answer passes untouched", async () => {
    const notFound = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.fail(new HttpServerError.RouteNotFound({ request })))
    const res = await answer(notFound)
    expect(res.status).toBe(404)
    expect(res.type).toBe("application/problem+json")
    expect(JSON.parse(res.text)).toMatchObject({ type: "https://kubemend.io/problems/not-found", detail: "no route for POST /a2a/invoke" })
    expect(await answer(Effect.succeed(HttpServerResponse.text("ok", { status: 202 })))).toMatchObject({ status: 202, text: "ok" })
  })
})
