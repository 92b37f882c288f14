/**
 * The Valkey (or Redis) the gateway replicas share their state in: `LOCAL_VALKEY_URL`, else one answering on
 * 127.0.0.1:6379 (CI and many developer machines run one; a fresh machine does not), when it answers PING. Probed
 * only when there is more than one replica: a single gateway keeps its state in memory, as it always has.
 */
import { Config, Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"

const defaultUrl = "redis://127.0.0.1:6379"

/** Whether a RESP server answers PING at host:port within a second. */
const answersPing = (host: string, port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = Net.connect(port, host)
    const done = (answer: boolean) => {
      socket.destroy()
      resume(Effect.succeed(answer))
    }
    socket.setTimeout(1000, () => done(false))
    socket.once("error", () => done(false))
    socket.once("connect", () => socket.write("PING\r\n"))
    // "+PONG", or "-NOAUTH" from a server that wants a password: either way a Valkey is there.
    socket.once("data", (data) => done(/^[+-]/.test(data.toString("utf8"))))
  })

export const localValkey = (replicas: number) =>
  Effect.gen(function* () {
    if (replicas === 1) return Option.none<string>()
    const url = Option.getOrElse(yield* Config.option(Config.string("LOCAL_VALKEY_URL")), () => defaultUrl)
    const { hostname, port } = new URL(url)
    return (yield* answersPing(hostname, Number(port === "" ? 6379 : port))) ? Option.some(url) : Option.none<string>()
  })

/** Whether the gateway replicas share their state: there is a Valkey to share it in. */
export const gatewaySharesState = (valkey: Option.Option<string>): boolean => Option.isSome(valkey)

/**
 * The gateway's config with its `valkey` block (GatewayConfig, Shared/ValkeySettings.ts) for the URL, when there is
 * one. `keyPrefix` keeps this platform's keys apart from another's on the same server (rate limits and session caps
 * count per user). A password in the URL goes to a file beside the config, not into it.
 */
export const withGatewaySharedState = (
  config: Record<string, unknown>,
  valkey: Option.Option<string>,
  files: { readonly passwordFile: string; readonly keyPrefix: string }
): Record<string, unknown> => {
  if (Option.isNone(valkey)) return config
  const url = new URL(valkey.value)
  const password = decodeURIComponent(url.password)
  if (password !== "") Fs.writeFileSync(files.passwordFile, password, { mode: 0o600 })
  const db = url.pathname.replace(/^\//, "")
  return {
    ...config,
    valkey: {
      host: url.hostname,
      port: url.port === "" ? 6379 : Number(url.port),
      ...(db === "" ? {} : { db: Number(db) }),
      ...(password === "" ? {} : { passwordFile: files.passwordFile }),
      ...(url.protocol === "rediss:" ? { tls: { enabled: true } } : {}),
      keyPrefix: files.keyPrefix
    }
  }
}
