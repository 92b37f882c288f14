/**
 * Hot reload of `phaseModels` from `llm-runtime.yaml` (the runtime ConfigMap mounted as a file). The file is polled:
 * ConfigMap volumes update by swapping a symlink, which file watchers report unreliably.
 */
import { FileSystem } from "@effect/platform"
import { Effect, Either, Ref, Schedule } from "effect"
import { parse } from "yaml"
import { decodePhaseModels, type LlmSettings, type PhaseModels } from "./Config.ts"
import type { LlmConfigError } from "./Errors.ts"
import { validateAll } from "./Target.ts"

/** `phaseModels` of the file's text; `undefined` when the file has no such key (the static ones then apply). */
export const parseRuntimeFile = (
  settings: LlmSettings,
  text: string
): Either.Either<PhaseModels | undefined, LlmConfigError | Error> => {
  let doc: unknown
  try {
    doc = parse(text)
  } catch (e) {
    return Either.left(e instanceof Error ? e : new Error(String(e)))
  }
  const raw = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).phaseModels : undefined
  if (raw === undefined) return Either.right(undefined)
  return decodePhaseModels(raw, "llm-runtime.yaml phaseModels").pipe(
    Either.flatMap((phaseModels) => Either.map(validateAll(settings, phaseModels), () => phaseModels))
  )
}

/**
 * The current phase overrides. Reads the file once now and then every `runtimeReloadInterval`; a missing or bad
 * file keeps the last good overrides and is logged once per distinct problem.
 */
export const phaseModelsRef = (settings: LlmSettings) =>
  Effect.gen(function* () {
    const current = yield* Ref.make(settings.phaseModels)
    const path = settings.runtimeConfigFile
    if (path === undefined) return current
    const fs = yield* FileSystem.FileSystem
    const seen = yield* Ref.make<string | undefined>(undefined)

    const remember = (key: string) => Ref.modify(seen, (last) => [last !== key, key] as const)
    const poll = Effect.gen(function* () {
      const text = yield* Effect.either(fs.readFileString(path))
      if (Either.isLeft(text)) {
        if (yield* remember(`error:${text.left.message}`)) {
          yield* Effect.logWarning("llm runtime config unreadable; keeping current phaseModels").pipe(
            Effect.annotateLogs({ path, reason: text.left.message })
          )
        }
        return
      }
      if (!(yield* remember(`text:${text.right}`))) return
      const parsed = parseRuntimeFile(settings, text.right)
      if (Either.isLeft(parsed)) {
        const e = parsed.left
        yield* Effect.logWarning("llm runtime config rejected; keeping current phaseModels").pipe(
          Effect.annotateLogs({ path, key: "key" in e ? e.key : "", reason: e.message })
        )
        return
      }
      yield* Ref.set(current, parsed.right ?? settings.phaseModels)
      yield* Effect.logInfo("llm phaseModels loaded").pipe(
        Effect.annotateLogs({ path, phases: Object.keys(parsed.right ?? settings.phaseModels).join(",") })
      )
    })

    yield* poll
    yield* poll.pipe(Effect.repeat(Schedule.spaced(settings.runtimeReloadInterval)), Effect.forkScoped)
    return current
  })
