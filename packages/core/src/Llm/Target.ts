/**
 * Which provider, model, origin and key one call goes to: the main block, then the phase override, then the
 * request's own `model`.
 */
import { Either, type Redacted } from "effect"
import { compact, endpointRequired, type LlmSettings, type PhaseModels, type Provider } from "./Config.ts"
import { LlmConfigError } from "./Errors.ts"
import type { ChatRequest, Phase } from "./Types.ts"

export interface Target {
  readonly provider: Provider
  readonly model: string
  readonly endpoint?: string
  readonly apiKey?: Redacted.Redacted<string>
  /** The config path errors about this target name (`llm` or `llm.phaseModels.<phase>`). */
  readonly at: string
}

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/** The rules of document 3 that can only be checked once provider and endpoint are known. */
export const validateTarget = (settings: LlmSettings, target: Target): Either.Either<Target, LlmConfigError> => {
  const fail = (key: string, message: string) => Either.left(new LlmConfigError({ key, message }))
  if (target.model.trim() === "") return fail(`${target.at}.model`, "must not be empty")
  if (target.endpoint === undefined && endpointRequired.has(target.provider)) {
    return fail(`${target.at}.endpoint`, `required for provider ${target.provider}`)
  }
  if (target.endpoint !== undefined && !isHttpUrl(target.endpoint)) {
    return fail(`${target.at}.endpoint`, `not an http(s) URL: ${target.endpoint}`)
  }
  if ((target.provider === "vertex" || target.provider === "vertex_ai") && settings.vertexProject === undefined) {
    return fail("llm.vertexProject", `required for provider ${target.provider}`)
  }
  if (
    target.provider === "bedrock" && target.apiKey === undefined &&
    (settings.awsAccessKeyId === undefined || settings.awsSecretAccessKey === undefined)
  ) {
    return fail(`${target.at}.apiKey`, "bedrock needs an API key or awsAccessKeyId and awsSecretAccessKey")
  }
  return Either.right(target)
}

export const baseTarget = (settings: LlmSettings): Target =>
  compact({
    provider: settings.provider,
    model: settings.model,
    endpoint: settings.endpoint,
    apiKey: settings.apiKey,
    at: "llm"
  })

const applyPhase = (settings: LlmSettings, phaseModels: PhaseModels, phase: Phase | undefined): Target => {
  const base = baseTarget(settings)
  const override = phase === undefined ? undefined : phaseModels[phase]
  if (override === undefined) return base
  return { ...base, ...override, at: `llm.phaseModels.${phase}` }
}

export const resolveTarget = (
  settings: LlmSettings,
  phaseModels: PhaseModels,
  request: Pick<ChatRequest, "model" | "phase">
): Either.Either<Target, LlmConfigError> => {
  const target = applyPhase(settings, phaseModels, request.phase)
  return validateTarget(settings, request.model === undefined ? target : { ...target, model: request.model })
}

/** Every static target must be valid at start, so a bad config stops the service instead of failing a call. */
export const validateAll = (settings: LlmSettings, phaseModels: PhaseModels): Either.Either<void, LlmConfigError> => {
  const phases = Object.keys(phaseModels) as Array<Phase>
  for (const phase of [undefined, ...phases]) {
    const checked = validateTarget(settings, applyPhase(settings, phaseModels, phase))
    if (Either.isLeft(checked)) return Either.left(checked.left)
  }
  return Either.right(undefined)
}
