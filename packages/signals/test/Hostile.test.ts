/**
 * Hostile senders against one running signal service, with the dev API server's real TokenReview and RBAC: no
 * token, garbage, a person's JWT (valid, expired, `alg: none`, another issuer's) get 401; a ServiceAccount without
 * the `gateway-signal-source` grant (another namespace's, or one named like the platform's own) and a disallowed
 * browser origin get 403; each a problem and a `signals.access.denied` audit event with the socket's peer (a spoofed
 * `X-Forwarded-For` and identity headers are ignored), and no request is made. Alertmanager's own token passes.
 */
import { describe, expect, it } from "@effect/vitest"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { Effect } from "effect"
import { alert, post, startKube, startSignals, webhook } from "./Harness.ts"

const prom = "/api/v1/signals/prometheus"
const event = "/api/v1/signals/kubernetes-event"
const spoof = { "x-forwarded-for": "203.0.113.7", "x-kubemend-user": "system:serviceaccount:monitoring:alertmanager", "x-forwarded-user": "alertmanager" }

describe("hostile signal senders", () => {
  it.scopedLive("every endpoint refuses them as problems, each refusal audited; the sender passes", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube, { corsAllowedOrigins: ["https://console.example"] })
      const issuer = yield* makeIssuer({})
      const foreign = yield* makeIssuer({})
      const cases: ReadonlyArray<readonly [string, string | undefined, number, string | undefined, Record<string, string>?]> = [
        ["no token", undefined, 401, undefined],
        ["garbage", "not-a-token", 401, undefined],
        ["a person's JWT", yield* issuer.persona("sre"), 401, undefined],
        ["expired", yield* issuer.bad.expired, 401, undefined],
        ["alg none", yield* issuer.bad.algNone(), 401, undefined],
        ["another issuer", yield* foreign.persona("sre"), 401, undefined],
        ["another namespace's ServiceAccount", kube.registerServiceAccountToken("intruders", "scraper"), 403, "system:serviceaccount:intruders:scraper"],
        [
          "the platform's name in another namespace",
          kube.registerServiceAccountToken("intruders", "alertmanager"),
          403,
          "system:serviceaccount:intruders:alertmanager"
        ],
        ["the sender from a disallowed origin", sender, 403, undefined, { origin: "https://evil.example" }]
      ]
      const body = webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" })])
      for (const path of [prom, event]) {
        for (const [kind, token, status, , headers] of cases) {
          const r = yield* post(svc.url + path, body, token, { ...spoof, ...headers })
          expect([kind, r.status, r.contentType]).toEqual([kind, status, "application/problem+json"])
        }
      }
      const denied = (yield* svc.recorder.events).filter((e) => e.event_type === "signals.access.denied")
      expect(denied).toHaveLength(cases.length * 2)
      for (const [i, [kind, , status, user]] of cases.entries()) {
        expect([kind, denied[i]!.error_code, denied[i]!.actor_id, denied[i]!.actor_ip, denied[i]!.event_category])
          .toEqual([kind, String(status), user ?? "anonymous", "127.0.0.1", "security"])
      }
      expect(denied.filter((e) => e.resource_id === `POST ${event}`)).toHaveLength(cases.length)
      expect(kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")).toHaveLength(0)

      const accepted = yield* post(svc.url + prom, body, sender, spoof)
      expect(accepted.status).toBe(201)
      expect((yield* svc.recorder.events).filter((e) => e.event_type === "signals.access.denied")).toHaveLength(cases.length * 2)
    }))
})
