/**
 * The Valkey (or Redis) the gateway replicas would share their state in: `LOCAL_VALKEY_URL`, else one answering on
 * 127.0.0.1:6379 (CI and many developer machines run one; a fresh machine does not). Probed only when there is more
 * than one replica: a single gateway keeps its state in memory, as it always has.
 */
import { Config, Effect, Option } from "effect"
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

/**
 * HOOK (issue 20): the gateway's config key for its shared state (MCP sessions, A2A tasks, session caps, rate
 * limits) is being added in packages/gateway. Until GatewayConfig reads one, the URL is not passed, every gateway
 * replica keeps its sessions to itself, and the local balancer keeps every client on one gateway replica. When it
 * lands: put the URL in the config here and return true from `gatewaySharesState` when `valkey` is some.
 */
export const gatewaySharesState = (_valkey: Option.Option<string>): boolean => false

export const withGatewaySharedState = (config: Record<string, unknown>, _valkey: Option.Option<string>) => config
