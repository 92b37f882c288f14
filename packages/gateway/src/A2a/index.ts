/**
 * The A2A surface as the gateway app mounts it: `a2aRouter` (`POST /a2a/invoke` and its alias `POST /`) and the
 * layers behind it. `a2aServices` needs the gateway services (GatewayConfig, ToolRegistry, ToolCalls, AgentSessionsClient,
 * Edge, GatewayAudit, K8s, McpSessions) plus `a2aConfigLive` (or A2aConfig + Llm layers in tests).
 */
import { HttpRouter } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, ConfigError, Effect, Either, Layer, Stream } from "effect"
import { Llm, LlmConfigError, layerConfig as llmLayerConfig, settingsConfig } from "@kubemend/core/Llm"
import { A2aAgent } from "./Agent.ts"
import { AgentTools } from "./AgentTools.ts"
import { A2aConfig } from "./Config.ts"
import { Contexts, SessionSlots } from "./Contexts.ts"
import { a2aHandler } from "./InvokeEndpoint.ts"
import { Tasks } from "./Tasks.ts"
import { TriageConfig, triageModelLive } from "../SeverityTriage.ts"
import { cardRouter } from "../Card/index.ts"
import { statusRouter } from "../Status/index.ts"

export { makeSeverityTriage, type SeverityTriage, TriageConfig, TriageModel, triageModelLive } from "../SeverityTriage.ts"
export { A2aAgent } from "./Agent.ts"
export { AgentTools, bridgeOnly } from "./AgentTools.ts"
export { A2aConfig, type A2aSettings } from "./Config.ts"
export { Contexts, SessionSlots } from "./Contexts.ts"
export { a2aHandler } from "./InvokeEndpoint.ts"
export { Tasks } from "./Tasks.ts"

export const a2aRouter = Effect.succeed(
  HttpRouter.empty.pipe(
    HttpRouter.post("/a2a/invoke", a2aHandler("/a2a/invoke")),
    HttpRouter.post("/", a2aHandler("/"))
  )
)

/**
 * Everything this surface serves, as one router: A2A, the status stream, the agent card and the access
 * pre-flight. Mount it with `gatewayListeners([a2aRoutes])`.
 */
export const a2aRoutes = Effect.all([a2aRouter, statusRouter, cardRouter]).pipe(
  Effect.map(([a2a, status, card]) => a2a.pipe(HttpRouter.concat(status), HttpRouter.concat(card)))
)

/**
 * The agent, its tasks, conversations and tools; the session pool is shared with the MCP bridge. Needs A2aConfig
 * and Llm (`a2aConfigLive`, or test layers). Severity triage is the tool registry's (`svc_list_alerts`): give
 * TriageConfig and TriageModel where the gateway services are built, as `a2aConfigLive` does.
 */
export const a2aServices = A2aAgent.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(Tasks.Default, Contexts.Default, AgentTools.Default)),
  Layer.provideMerge(SessionSlots.layerWithMcp)
)

/** Every call fails with this when the gateway config has no `llm` block: tasks end `failed`, the gateway runs. */
const missing = new LlmConfigError({ key: "llm.provider", message: "no model is configured for the A2A agent" })
const noModel = Layer.succeed(Llm, {
  chat: () => Effect.fail(missing),
  stream: () => Stream.fail(missing),
  route: () => Effect.fail(missing)
})

/**
 * The loop's model: the `llm` block of the gateway config, which the operator renders from the agent's settings
 * (`GATEWAY_LLM_PROVIDER`, `GATEWAY_LLM_MODEL`, ...). Absent block: no model (see `noModel`); a present but
 * invalid block fails startup like any bad config.
 */
export const a2aLlmLive = Layer.unwrapEffect(
  Effect.map(
    Effect.either(Config.string("provider").pipe(Config.nested("llm"))),
    (provider) =>
      Either.isLeft(provider) && ConfigError.isMissingDataOnly(provider.left)
        ? noModel
        : llmLayerConfig(Config.nested(settingsConfig, "llm")).pipe(Layer.provide(NodeHttpClient.layerUndici))
  )
)

/** A2A settings, the loop's model and the triage model from the gateway's config provider. */
export const a2aConfigLive = Layer.mergeAll(A2aConfig.layerConfig, a2aLlmLive, TriageConfig.layerConfig, triageModelLive)
