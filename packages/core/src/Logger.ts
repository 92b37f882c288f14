/**
 * JSON-lines logs: `level`, `ts` (ISO 8601 UTC), `msg`, then the fiber's annotations (`controller`, `name`, …) and,
 * for failures, the pretty-printed cause under `error`.
 */
import { Cause, Config, HashMap, Layer, List, Logger, LogLevel } from "effect"

const levelName = (level: LogLevel.LogLevel) => (level._tag === "Warning" ? "warn" : level.label.toLowerCase())

const text = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ")
}

export const jsonLogger = (write: (line: string) => void = (line) => process.stdout.write(line + "\n")) =>
  Logger.make(({ annotations, cause, date, logLevel, message, spans }) => {
    const record: Record<string, unknown> = { level: levelName(logLevel), ts: date.toISOString(), msg: text(message) }
    for (const [key, value] of HashMap.toEntries(annotations)) record[key] = value
    if (!List.isNil(spans)) record["span"] = List.unsafeHead(spans).label
    if (!Cause.isEmpty(cause)) record["error"] = Cause.pretty(cause, { renderErrorCause: true })
    write(JSON.stringify(record))
  })

const LogLevelName = Config.literal("debug", "info", "warn", "error")("level")

/** Replaces the default logger with JSON lines at the level in `logging.level` (default info). */
export const layerJson = Layer.unwrapEffect(
  Config.nested(LogLevelName, "logging").pipe(
    Config.withDefault("info" as const),
    Config.map((level) =>
      Layer.merge(
        Logger.replace(Logger.defaultLogger, jsonLogger()),
        Logger.minimumLogLevel(
          { debug: LogLevel.Debug, info: LogLevel.Info, warn: LogLevel.Warning, error: LogLevel.Error }[level]
        )
      )
    )
  )
)
