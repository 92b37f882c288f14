/**
 * Where the local gateway replicas share their state: the Valkey at LOCAL_VALKEY_URL (or 127.0.0.1:6379) when one
 * answers PING on loopback, none otherwise (each replica keeps its own, and the platform says so); a URL becomes the
 * gateway's `valkey` block with its password in a file, not in the config.
 */
import { assert, describe, it } from "@effect/vitest"
import { freePort } from "@kubemend/devkit/FreePort"
import { ConfigProvider, Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { localValkey, withGatewaySharedState } from "../src/SharedState.ts"

const withUrl = (url: string) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["LOCAL_VALKEY_URL", url]])))

/** A loopback server answering every command with `reply`, for the life of the scope. */
const resp = (reply: string) =>
  Effect.acquireRelease(
    Effect.async<Net.Server>((resume) => {
      const server = Net.createServer((socket) => socket.once("data", () => socket.end(reply)))
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map((server) => (server.address() as Net.AddressInfo).port))

describe("local shared state for the gateway replicas", () => {
  it.scoped("a Valkey that answers PING is used; one that needs a password counts as there", () =>
    Effect.gen(function* () {
      const pong = yield* resp("+PONG\r\n")
      assert.deepStrictEqual(yield* localValkey(2).pipe(withUrl(`redis://127.0.0.1:${pong}`)), Option.some(`redis://127.0.0.1:${pong}`))
      const auth = yield* resp("-NOAUTH Authentication required.\r\n")
      assert.isTrue(Option.isSome(yield* localValkey(2).pipe(withUrl(`redis://:pw@127.0.0.1:${auth}`))))
    }))

  it.live("nothing listening, or a single replica: no shared state", () =>
    Effect.gen(function* () {
      const closed = yield* freePort
      assert.deepStrictEqual(yield* localValkey(2).pipe(withUrl(`redis://127.0.0.1:${closed}`)), Option.none())
      assert.deepStrictEqual(yield* localValkey(1).pipe(withUrl("redis://127.0.0.1:6379")), Option.none())
    }))

  it("a URL becomes the gateway's valkey block; the password goes to a file of its own", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-valkey-"))
    const files = { passwordFile: Path.join(dir, "valkey-password"), keyPrefix: "kubemend-local:abc:gateway" }
    const config = withGatewaySharedState({ port: 8443 }, Option.some("rediss://:s%40cret@valkey.example:6380/2"), files)
    assert.deepStrictEqual(config, {
      port: 8443,
      valkey: { host: "valkey.example", port: 6380, db: 2, passwordFile: files.passwordFile, tls: { enabled: true }, keyPrefix: files.keyPrefix }
    })
    assert.strictEqual(Fs.readFileSync(files.passwordFile, "utf8"), "s@cret")
    assert.strictEqual(Fs.statSync(files.passwordFile).mode & 0o777, 0o600)
    assert.deepStrictEqual(withGatewaySharedState({ port: 8443 }, Option.none(), files), { port: 8443 })
    assert.deepStrictEqual(withGatewaySharedState({}, Option.some("redis://127.0.0.1"), files), {
      valkey: { host: "127.0.0.1", port: 6379, keyPrefix: files.keyPrefix }
    })
  })
})
