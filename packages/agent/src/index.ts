/** The investigation agent as a library: its layers (for the local platform) and its config. */
export { MetricsLive, ServerLive, SessionsLive } from "./Agent.ts"
export { AgentConfig, type AgentSettings, layerShortLlmEnv, withShortLlmEnv } from "./AgentConfig.ts"
export { DependenciesLive } from "./Dependencies.ts"
export { McpPath } from "./Interactive/Http.ts"
