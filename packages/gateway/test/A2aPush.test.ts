/**
 * A2A push notifications are not offered (nothing in the spec or the original's facts calls for them; the
 * original's card says `pushNotifications: false`): the card says so to anonymous and authenticated callers, the
 * `@a2a-js/sdk` client refuses the push-config calls from the card alone, and the gateway answers every push-config
 * method of both protocol versions with the standard -32003 (PushNotificationNotSupportedError) when asked anyway.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientFor } from "./A2aSdk.ts"
import { InfraLive, startTestGateway, token } from "./A2aHarness.ts"

/** The error an SDK call failed with (its class name), or `ok`. */
const outcome = (p: () => Promise<unknown>) =>
  // The client throws some of them synchronously.
  Effect.promise(() => Promise.resolve().then(p).then(() => "ok", (e: unknown) => (e instanceof Error ? e.name : String(e))))

const ref = { tenant: "", taskId: "some-task", id: "cfg-1" }
const config = { ...ref, url: "https://hooks.example.com/a2a", token: "", authentication: undefined }

layer(InfraLive, { excludeTestServices: true })("A2A push notifications", (it) => {
  it.scoped("the card says pushNotifications false; every push-config call ends in PushNotificationNotSupportedError", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const bearer = yield* token("sre")
      const cards = yield* Effect.promise(() =>
        Promise.all([{}, { authorization: `Bearer ${bearer}` }].map(async (headers) =>
          (await fetch(`${gw.url}/.well-known/agent-card.json`, { headers })).json() as Promise<any>
        ))
      )
      for (const card of cards) {
        assert.strictEqual(card.capabilities.pushNotifications, false)
      }

      for (const mode of ["1.0", "0.3"] as const) {
        const { client, methods } = yield* clientFor(gw, bearer, mode)
        // The client reads the card and refuses without a round trip.
        assert.strictEqual(
          yield* outcome(() =>
            client.createTaskPushNotificationConfig(config)
          ),
          "PushNotificationNotSupportedError",
          mode
        )
        assert.strictEqual(yield* outcome(() => client.getTaskPushNotificationConfig(ref)), "PushNotificationNotSupportedError", mode)
        assert.strictEqual(
          yield* outcome(() => client.listTaskPushNotificationConfig({ ...ref, pageSize: 0, pageToken: "" })),
          "PushNotificationNotSupportedError",
          mode
        )
        assert.deepStrictEqual(methods, [], mode)
        // Asked anyway (the transport underneath, and delete, which the client does not check), the gateway refuses.
        const t = client.transport
        const answers = [
          yield* outcome(() => t.createTaskPushNotificationConfig(config)),
          yield* outcome(() => t.getTaskPushNotificationConfig(ref)),
          yield* outcome(() => t.listTaskPushNotificationConfig({ ...ref, pageSize: 0, pageToken: "" })),
          yield* outcome(() => client.deleteTaskPushNotificationConfig(ref))
        ]
        assert.deepStrictEqual(answers, Array(4).fill("PushNotificationNotSupportedError"), mode)
        assert.deepStrictEqual(
          methods,
          mode === "1.0"
            ? ["CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"]
            : [
              "tasks/pushNotificationConfig/set",
              "tasks/pushNotificationConfig/get",
              "tasks/pushNotificationConfig/list",
              "tasks/pushNotificationConfig/delete"
            ]
        )
      }
    }))

  it.scoped("on the wire: -32003 with the request id for each push-config method", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const bearer = yield* token("sre")
      const names = [
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig"
      ]
      for (const [i, method] of names.entries()) {
        const body = yield* Effect.promise(async () => {
          const res = await fetch(`${gw.url}/a2a/invoke`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
            body: JSON.stringify({ jsonrpc: "2.0", id: i, method, params: { id: "some-task" } })
          })
          return (await res.json()) as any
        })
        assert.strictEqual(body.id, i, method)
        assert.strictEqual(body.error.code, -32003, method)
        assert.strictEqual(body.error.message, "Push Notification Not Supported", method)
      }
    }))
})
