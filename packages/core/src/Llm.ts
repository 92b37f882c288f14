/**
 * The LLM as the agent uses it: chat with tools, streaming deltas, token counts, over ten providers.
 * All adapters share one HTTP path on Effect's HttpClient (Llm/Transport.ts); `@effect/ai-openai` speaks the Responses
 * API, which the OpenAI-compatible servers this platform targets (vLLM, Ollama, gateways) do not, so it is not used.
 */
import { FileSystem, HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, Context, Effect, Layer, Option, Redacted, Ref, Stream } from "effect"
import type { Adapter, AdapterContext } from "./Llm/Adapter.ts"
import * as Anthropic from "./Llm/Anthropic.ts"
import { makeOauth2 } from "./Llm/Auth.ts"
import * as Bedrock from "./Llm/Bedrock.ts"
import { type LlmSettingsInput, makeSettings, type Provider, settingsConfig } from "./Llm/Config.ts"
import { type LlmError, LlmConfigError } from "./Llm/Errors.ts"
import * as Gemini from "./Llm/Gemini.ts"
import { makeTransport } from "./Llm/Transport.ts"
import * as Ollama from "./Llm/Ollama.ts"
import * as OpenAi from "./Llm/OpenAi.ts"
import { phaseModelsRef } from "./Llm/Runtime.ts"
import { resolveTarget, validateAll } from "./Llm/Target.ts"
import type { ChatDelta, ChatRequest, ChatResponse } from "./Llm/Types.ts"

export {
  decodePhaseModels,
  defaults,
  type LlmSettings,
  type LlmSettingsInput,
  makeSettings,
  type Oauth2Settings,
  type PhaseModels,
  type PhaseOverride,
  type Provider,
  providers,
  settingsConfig
} from "./Llm/Config.ts"
export * from "./Llm/Errors.ts"
export { collect } from "./Llm/Shared.ts"
export * from "./Llm/Types.ts"

/** Where a call goes after phase and model overrides. */
export interface LlmRoute {
  readonly provider: Provider
  readonly model: string
  readonly endpoint?: string
}

export interface LlmService {
  readonly chat: (request: ChatRequest) => Effect.Effect<ChatResponse, LlmError>
  /** Text deltas as they arrive, tool calls once assembled, then one `Finish` with the token counts. */
  readonly stream: (request: ChatRequest) => Stream.Stream<ChatDelta, LlmError>
  /** The provider and model a request would use now (phaseModels reload at runtime). */
  readonly route: (request: Pick<ChatRequest, "phase" | "model">) => Effect.Effect<LlmRoute, LlmConfigError>
}

export class Llm extends Context.Tag("@kubemend/core/Llm")<Llm, LlmService>() {}

const readFile = (fs: FileSystem.FileSystem, path: string, key: string) =>
  Effect.mapError(fs.readFileString(path), (e) => new LlmConfigError({ key, message: `cannot read ${path}: ${e.message}` }))

/** A client trusting only the configured CA bundle (private gateways), else the ambient HttpClient. */
const httpClient = (fs: FileSystem.FileSystem, tlsCaFile: string | undefined) =>
  tlsCaFile === undefined
    ? HttpClient.HttpClient
    : Effect.flatMap(readFile(fs, tlsCaFile, "llm.tlsCaFile"), (ca) =>
      Effect.provideServiceEffect(NodeHttpClient.make, NodeHttpClient.HttpAgent, NodeHttpClient.makeAgent({ ca })))

export const make = Effect.fn("Llm.make")(function* (input: LlmSettingsInput) {
  const fs = yield* FileSystem.FileSystem
  const fileKey = input.apiKeyFile === undefined
    ? undefined
    : (yield* readFile(fs, input.apiKeyFile, "llm.apiKeyFile")).trim()
  const settings = makeSettings(fileKey === undefined ? input : { ...input, apiKey: Redacted.make(fileKey) })
  yield* validateAll(settings, settings.phaseModels)

  const client = yield* httpClient(fs, settings.tlsCaFile)
  const ctx: AdapterContext = {
    settings,
    transport: makeTransport(client, settings),
    oauth2: settings.oauth2 === undefined
      ? Option.none()
      : Option.some(yield* makeOauth2(client, settings.oauth2, settings.timeout))
  }
  const openAi = OpenAi.make(ctx)
  const anthropic = Anthropic.make(ctx)
  const adapters: Record<Provider, Adapter> = {
    openai: openAi,
    openai_compatible: openAi,
    mistral: openAi,
    huggingface: openAi,
    azure: openAi,
    anthropic,
    vertex_ai: anthropic,
    vertex: Gemini.make(ctx),
    ollama: Ollama.make(ctx),
    bedrock: Bedrock.make(ctx)
  }
  const phaseModels = yield* phaseModelsRef(settings)
  const resolve = (request: Pick<ChatRequest, "phase" | "model">) =>
    Effect.flatMap(Ref.get(phaseModels), (current) => resolveTarget(settings, current, request))

  return Llm.of({
    chat: Effect.fn("Llm.chat")(function* (request) {
      const target = yield* resolve(request)
      yield* Effect.annotateCurrentSpan({ provider: target.provider, model: target.model })
      return yield* adapters[target.provider].chat(target, request)
    }),
    stream: (request) =>
      Stream.unwrap(Effect.map(resolve(request), (target) => adapters[target.provider].stream(target, request))).pipe(
        Stream.withSpan("Llm.stream")
      ),
    route: (request) =>
      Effect.map(resolve(request), (t) => ({
        provider: t.provider,
        model: t.model,
        ...(t.endpoint === undefined ? {} : { endpoint: t.endpoint })
      }))
  })
})

/** Live layer from settings; needs an HttpClient and a FileSystem (e.g. NodeHttpClient.layer, NodeFileSystem.layer). */
export const layer = (input: LlmSettingsInput) => Layer.scoped(Llm, make(input))

/** Live layer from the `llm` block of the service config (env overrides `LLM_PROVIDER`, `LLM_MODEL`, ...). */
export const layerConfig = (config: Config.Config<LlmSettingsInput> = Config.nested(settingsConfig, "llm")) => Layer.scoped(Llm, Effect.flatMap(config, make))
