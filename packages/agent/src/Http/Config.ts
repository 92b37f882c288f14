/**
 * `GET /config`: the effective runtime configuration, secrets left out. Dev mode only; otherwise 404, so a
 * production agent does not describe itself to whoever can reach it.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Duration, Effect } from "effect"
import { AgentApi } from "@kubemend/core/AgentApi"
import { formatGoDuration } from "@kubemend/core/Config"
import { NotFound } from "@kubemend/core/Errors"
import { Llm } from "@kubemend/core/Llm"
import { AgentConfig } from "../AgentConfig.ts"
import { asProblem } from "./Incident.ts"

/** Durations as Go strings, everything else as is. */
const plain = (value: unknown): unknown => {
  if (Duration.isDuration(value)) return formatGoDuration(value)
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
  }
  return value
}

export const ConfigHttpLive = HttpApiBuilder.group(AgentApi, "config", (handlers) =>
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const llm = yield* Llm
    return handlers.handle("getConfig", () =>
      Effect.gen(function* () {
        if (!config.devMode) return yield* asProblem(new NotFound({ resource: "route", id: "/config" }))
        const route = yield* Effect.either(llm.route({}))
        return {
          ...(plain(config) as Record<string, unknown>),
          llm: route._tag === "Right" ? route.right : { error: route.left.message }
        }
      }))
  }))
