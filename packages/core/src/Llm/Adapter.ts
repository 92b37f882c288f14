/**
 * What each provider adapter implements: one wire format, reached through the shared Transport.
 */
import type { Effect, Stream } from "effect"
import type { Credentials } from "./Auth.ts"
import type { LlmError } from "./Errors.ts"
import type { Transport } from "./Transport.ts"
import type { Target } from "./Target.ts"
import type { ChatDelta, ChatRequest, ChatResponse } from "./Types.ts"

export interface AdapterContext extends Credentials {
  readonly transport: Transport
}

export interface Adapter {
  readonly chat: (target: Target, request: ChatRequest) => Effect.Effect<ChatResponse, LlmError>
  readonly stream: (target: Target, request: ChatRequest) => Stream.Stream<ChatDelta, LlmError>
}

/** The request's temperature, else the configured one, else none (then it is left out of the wire request). */
export const temperatureOf = (ctx: AdapterContext, request: ChatRequest): number | undefined => request.temperature ?? ctx.settings.temperature
