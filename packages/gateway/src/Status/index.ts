/**
 * The status stream as the gateway app mounts it: `statusRouter` (`POST /a2a/status`) and `statusServices`
 * (needs K8s and `statusConfigLive` or `StatusConfig.layer(...)`; the route also needs the gateway
 * services Edge, RateLimits, GatewayAudit and GatewayConfig, and the listener's Drain).
 */
import { HttpRouter } from "@effect/platform"
import { Effect } from "effect"
import { StatusConfig } from "./Config.ts"
import { statusEndpoint, statusHandler } from "./StatusEndpoint.ts"
import { StatusHub } from "./Hub.ts"

export { StatusConfig, type StatusSettings } from "./Config.ts"
export { StatusHub } from "./Hub.ts"
export { statusEndpoint, statusHandler } from "./StatusEndpoint.ts"

export const statusRouter = Effect.succeed(HttpRouter.empty.pipe(HttpRouter.post(statusEndpoint, statusHandler)))

export const statusServices = StatusHub.Default

export const statusConfigLive = StatusConfig.layerConfig
