/**
 * One configuration loader for every service: a YAML file (`CONFIG_FILE`, camelCase keys mirroring the platform CR
 * block of that service) overlaid by environment variables (constant case, nested under the service name:
 * `GATEWAY_RATE_LIMIT_USER_REQUESTS_PER_SEC`). Services declare their config with `effect/Config`; durations are
 * Go-style strings (`30s`, `15m`, `2160h`).
 */
import { FileSystem } from "@effect/platform"
import { Cause, Config, ConfigError, ConfigProvider, Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import * as Yaml from "yaml"

const goUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 }
const goDurationPattern = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/
const goDurationPart = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g

/** Parses a Go duration string (`1h30m`, `250ms`, `0s`). */
export const parseGoDuration = (text: string): Option.Option<Duration.Duration> => {
  if (text === "0") return Option.some(Duration.zero)
  if (!goDurationPattern.test(text)) return Option.none()
  let millis = 0
  for (const [, amount, unit] of text.matchAll(goDurationPart)) millis += Number(amount) * goUnits[unit!]!
  return Option.some(Duration.millis(millis))
}

/** Formats a Duration the way Go prints it (`1h30m0s` style, shortened: `90m` -> `1h30m`). */
export const formatGoDuration = (d: Duration.Duration): string => {
  let ms = Duration.toMillis(d)
  if (ms === 0) return "0s"
  const parts: Array<string> = []
  for (const [unit, size] of [["h", 3600e3], ["m", 60e3], ["s", 1e3]] as const) {
    const n = Math.floor(ms / size)
    if (n > 0) parts.push(`${n}${unit}`)
    ms -= n * size
  }
  if (ms > 0) parts.push(`${ms}ms`)
  return parts.join("")
}

/** `"30s"` <-> `Duration`. */
export const GoDuration = Schema.transformOrFail(Schema.String, Schema.DurationFromSelf, {
  strict: true,
  decode: (s, _, ast) =>
    Option.match(parseGoDuration(s), {
      onNone: () => Effect.fail(new ParseResult.Type(ast, s, `expected a Go duration such as 30s, 15m or 2160h, got "${s}"`)),
      onSome: Effect.succeed
    }),
  encode: (d) => Effect.succeed(formatGoDuration(d))
}).annotations({ identifier: "GoDuration", description: "Go duration string such as 30s, 15m or 2160h" })

/** A Go duration config value: `duration("keepaliveInterval")`. */
export const duration = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((s) =>
      Option.match(parseGoDuration(s), {
        onNone: () => Either.left(ConfigError.InvalidData([], `expected a Go duration such as 30s, 15m or 2160h, got "${s}"`)),
        onSome: Either.right
      })
    )
  )

/** An integer within bounds. */
export const intInRange = (name: string, min: number, max: number) =>
  Config.integer(name).pipe(Config.validate({ message: `must be between ${min} and ${max}`, validation: (n) => n >= min && n <= max }))

/**
 * The provider for one service: environment first (constant case under `service`), then the YAML file, then the
 * Config defaults. Environment values win so a deployment can override one key without rewriting the file.
 */
export const providerFor = (service: string, file: unknown, env: ConfigProvider.ConfigProvider = ConfigProvider.fromEnv()) =>
  env.pipe(ConfigProvider.nested(service), ConfigProvider.constantCase, ConfigProvider.orElse(() => ConfigProvider.fromJson(file ?? {})))

/** Reads and parses `CONFIG_FILE` (YAML) when set. */
export const readConfigFile = Effect.gen(function* () {
  const path = yield* Config.option(Config.string("CONFIG_FILE"))
  if (Option.isNone(path)) return {}
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(path.value)
  return yield* Effect.try({
    try: () => (Yaml.parse(text) as unknown) ?? {},
    catch: (e) => ConfigError.InvalidData([], `CONFIG_FILE ${path.value} is not valid YAML: ${String(e)}`)
  })
})

/** Installs the service's provider as the default one, so every `Config` read below it sees file + env. */
export const layerProvider = (service: string) =>
  Layer.unwrapEffect(
    Effect.map(readConfigFile, (file) => Layer.setConfigProvider(providerFor(service, file)))
  )

/**
 * One line naming the key and the problem, for a service refusing to start. Of the two sides of the env-or-file
 * provider, a value that is present but wrong beats a missing one, and the file's camelCase path names a missing key.
 */
export const formatConfigError = (error: ConfigError.ConfigError): string => {
  const collect = (e: ConfigError.ConfigError): Array<ConfigError.ConfigError> => {
    switch (e._op) {
      case "And":
        return [...collect(e.left), ...collect(e.right)]
      case "Or": {
        const left = collect(e.left)
        const right = collect(e.right)
        const present = [...left, ...right].filter((x) => x._op !== "MissingData")
        return present.length > 0 ? present : right
      }
      default:
        return [e]
    }
  }
  const lines = collect(error).map((e) => {
    // An env-provided value is named as the variable a user would set; a file value by its dot path.
    const segments = e._op === "And" || e._op === "Or" ? [] : e.path
    const path = segments.join(segments.every((s) => /^[A-Z0-9_]+$/.test(s)) ? "_" : ".")
    const message = e._op === "And" || e._op === "Or" ? "" : e.message
    return `${path || "(root)"}: ${message}`
  })
  return `invalid configuration: ${[...new Set(lines)].join("; ")}`
}

export const isConfigError = (u: unknown): u is ConfigError.ConfigError => ConfigError.isConfigError(u)

export const configErrorFromCause = (cause: Cause.Cause<unknown>): Option.Option<ConfigError.ConfigError> =>
  Option.filter(Cause.failureOption(cause), isConfigError) as Option.Option<ConfigError.ConfigError>
