import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Duration, Effect, Either, Option } from "effect"
import { duration, formatConfigError, formatGoDuration, intInRange, parseGoDuration, providerFor } from "../src/Config.ts"

const GatewayLike = Config.all({
  rateLimit: Config.nested(
    Config.all({
      ipRequestsPerSec: Config.integer("ipRequestsPerSec").pipe(Config.withDefault(50)),
      userRequestsPerSec: Config.integer("userRequestsPerSec").pipe(Config.withDefault(20))
    }),
    "rateLimit"
  ),
  keepaliveInterval: duration("keepaliveInterval").pipe(Config.withDefault(Duration.seconds(15))),
  drainSeconds: Config.nested(intInRange("drainSeconds", 0, 300), "shutdown").pipe(Config.withDefault(15)),
  origins: Config.array(Config.string(), "allowedOrigins").pipe(Config.withDefault([] as ReadonlyArray<string>)),
  apiKey: Config.option(Config.redacted("apiKey"))
})

const env = (entries: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(entries)), { pathDelim: "_", seqDelim: "," })

const load = (file: unknown, vars: Record<string, string> = {}) => Effect.withConfigProvider(GatewayLike, providerFor("gateway", file, env(vars)))

describe("Go durations", () => {
  it("parses and formats the forms Go prints", () => {
    expect(Option.map(parseGoDuration("30s"), Duration.toMillis)).toEqual(Option.some(30_000))
    expect(Option.map(parseGoDuration("1h30m"), Duration.toMillis)).toEqual(Option.some(5_400_000))
    expect(Option.map(parseGoDuration("2160h"), Duration.toHours)).toEqual(Option.some(2160))
    expect(Option.map(parseGoDuration("250ms"), Duration.toMillis)).toEqual(Option.some(250))
    expect(parseGoDuration("15 minutes")).toEqual(Option.none())
    expect(parseGoDuration("-5s")).toEqual(Option.none())
    expect(formatGoDuration(Duration.minutes(90))).toBe("1h30m")
    expect(formatGoDuration(Duration.zero)).toBe("0s")
  })
})

describe("config loader", () => {
  it.effect("uses the spec defaults when nothing is set", () =>
    Effect.gen(function* () {
      const c = yield* load({})
      expect(c.rateLimit).toEqual({ ipRequestsPerSec: 50, userRequestsPerSec: 20 })
      expect(Duration.toSeconds(c.keepaliveInterval)).toBe(15)
      expect(c.drainSeconds).toBe(15)
      expect(Option.isNone(c.apiKey)).toBe(true)
    }))

  it.effect("reads camelCase keys from the file and lets constant-case env override one key", () =>
    Effect.gen(function* () {
      const c = yield* load(
        { rateLimit: { ipRequestsPerSec: 99, userRequestsPerSec: 5 }, keepaliveInterval: "1m", allowedOrigins: ["https://a"] },
        { GATEWAY_RATE_LIMIT_USER_REQUESTS_PER_SEC: "7", GATEWAY_API_KEY: "s3cret" }
      )
      expect(c.rateLimit).toEqual({ ipRequestsPerSec: 99, userRequestsPerSec: 7 })
      expect(Duration.toSeconds(c.keepaliveInterval)).toBe(60)
      expect(c.origins).toEqual(["https://a"])
      // Secrets stay Redacted: printing the config never shows them.
      expect(String(Option.getOrThrow(c.apiKey))).not.toContain("s3cret")
    }))

  it.effect("env lists are comma separated", () =>
    Effect.gen(function* () {
      const c = yield* load({}, { GATEWAY_ALLOWED_ORIGINS: "https://a,https://b" })
      expect(c.origins).toEqual(["https://a", "https://b"])
    }))

  it.effect("a bad value is refused with one line naming the key", () =>
    Effect.gen(function* () {
      const result = yield* Effect.either(load({ keepaliveInterval: "5x", shutdown: { drainSeconds: 301 } }))
      expect(Either.isLeft(result)).toBe(true)
      const line = formatConfigError(Either.getLeft(result).pipe(Option.getOrThrow))
      expect(line).not.toContain("\n")
      expect(line).toContain("keepaliveInterval: expected a Go duration such as 30s, 15m or 2160h, got \"5x\"")
      expect(line).toContain("shutdown.drainSeconds: must be between 0 and 300")
    }))

  it.effect("a bad env value names the env variable", () =>
    Effect.gen(function* () {
      const result = yield* Effect.either(load({}, { GATEWAY_RATE_LIMIT_IP_REQUESTS_PER_SEC: "lots" }))
      const line = formatConfigError(Either.getLeft(result).pipe(Option.getOrThrow))
      expect(line).toContain("GATEWAY_RATE_LIMIT_IP_REQUESTS_PER_SEC")
    }))
})
