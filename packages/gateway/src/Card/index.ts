/**
 * Discovery as the gateway app mounts it: `cardRouter` with `GET /.well-known/agent-card.json` (optional auth,
 * skills scoped to the caller) and `GET /a2a/access` (console-gate pre-flight). Needs the A2A services (AgentTools,
 * A2aConfig) and the gateway's Edge and Sar.
 */
import { HttpRouter } from "@effect/platform"
import { Effect } from "effect"
import { accessHandler, accessPath } from "./Access.ts"
import { cardHandler, cardPath } from "./Card.ts"

export { accessHandler, accessPath } from "./Access.ts"
export { agentCard, cardHandler, cardPath, skillsFor } from "./Card.ts"

export const cardRouter = Effect.succeed(
  HttpRouter.empty.pipe(HttpRouter.get(cardPath, cardHandler), HttpRouter.get(accessPath, accessHandler))
)
