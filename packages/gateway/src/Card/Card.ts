/**
 * The agent card (`GET /.well-known/agent-card.json`). One document serves both protocol generations: A2A 0.3
 * clients read `url`, `protocolVersion`, `preferredTransport`, `additionalInterfaces` and the OpenAPI-style
 * `securitySchemes`/`security`; A2A 1.0 clients read `supportedInterfaces` (the 1.0 interface first, so the
 * SDK's "prefer 1.0" picks it) and the protobuf-style `httpAuthSecurityScheme`/`securityRequirements`.
 * Unauthenticated callers get the shell (empty `skills`); authenticated ones the agent's tools their SAR allows.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Option } from "effect"
import type { Principal } from "@kubemend/core/Auth"
import { Sar } from "@kubemend/core/Sar"
import { problemResponse } from "@kubemend/core/Wire"
import { A2aConfig, type A2aSettings } from "../A2a/Config.ts"
import { type AgentTool, AgentTools } from "../A2a/AgentTools.ts"
import { Edge } from "../Edge/Chain.ts"

export const cardPath = "/.well-known/agent-card.json"

/** Where clients reach the gateway: the configured public URL, else what the request came in on. */
export const baseUrlOf = (settings: A2aSettings, request: HttpServerRequest.HttpServerRequest): string => {
  if (Option.isSome(settings.publicUrl)) return settings.publicUrl.value.replace(/\/+$/, "")
  const first = (h: string | undefined) => h?.split(",")[0]?.trim()
  const encrypted = (NodeHttpServerRequest.toIncomingMessage(request).socket as { encrypted?: boolean }).encrypted === true
  const proto = first(request.headers["x-forwarded-proto"]) ?? (encrypted ? "https" : "http")
  const host = first(request.headers["x-forwarded-host"]) ?? request.headers["host"] ?? "localhost"
  return `${proto}://${host}`
}

export interface Skill {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
}

const skillOf = (t: AgentTool): Skill => ({
  id: t.name,
  name: t.name,
  description: t.def.description,
  tags: ["kubemend", t.name.startsWith("cluster_") ? "cluster" : "remediation"]
})

export const agentCard = (settings: A2aSettings, baseUrl: string, skills: ReadonlyArray<Skill>) => {
  const invoke = `${baseUrl}/a2a/invoke`
  return {
    name: settings.agentName,
    description: settings.agentDescription,
    version: settings.agentVersion,
    url: invoke,
    protocolVersion: "0.3.0",
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url: invoke, transport: "JSONRPC" }, { url: `${baseUrl}/`, transport: "JSONRPC" }],
    supportedInterfaces: [
      { url: invoke, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: invoke, protocolBinding: "JSONRPC", protocolVersion: "0.3" }
    ],
    provider: { organization: settings.providerOrganization, url: settings.providerUrl },
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: true },
    securitySchemes: {
      bearer: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "JWT",
        description: "OIDC access token (Authorization: Bearer <token>)",
        httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" }
      }
    },
    security: [{ bearer: [] }],
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    authentication: { schemes: [{ scheme: "bearer" }] },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills
  }
}

export const cardHandler = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const settings = yield* A2aConfig
  // Authentication is optional here: no token or an unusable one gets the shell card, never a 401.
  const edge = yield* Edge
  const identified = yield* Effect.either(edge.identifyOptional(request, cardPath))
  if (Either.isLeft(identified)) return yield* problemResponse(identified.left)
  const principal = Option.getOrUndefined(identified.right)?.principal
  const skills = principal === undefined ? [] : yield* skillsFor(principal)
  yield* Effect.logDebug("agent card accessed").pipe(
    Effect.annotateLogs({ audit: "discovery.agent_card_accessed", source_ip: edge.clientIp(request), scoped: principal !== undefined })
  )
  return HttpServerResponse.unsafeJson(agentCard(settings, baseUrlOf(settings, request), skills), {
    headers: { "cache-control": "no-cache", vary: "Authorization" }
  })
}).pipe(Effect.withSpan("Card.agentCard"))

/** The agent's tools this caller may use: none without console access, else those its per-tool SAR allows. */
export const skillsFor = (principal: Principal) =>
  Effect.gen(function* () {
    const sar = yield* Sar
    const { tools } = yield* AgentTools
    if (!(yield* (yield* Edge).consoleAllowed(principal))) return []
    const allowed = yield* Effect.forEach(tools, (t) => sar.check(principal, "tools", t.name), { concurrency: 8 })
    return tools.filter((_, i) => allowed[i]).map(skillOf)
  })
