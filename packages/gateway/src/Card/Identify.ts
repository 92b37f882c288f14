/**
 * The edge chain without the console gate, for the status stream ("every authenticated user may subscribe"). It is
 * the Edge's own `identify` (also behind the access pre-flight), so order and audit events match `POST /mcp`.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Edge } from "../Edge/Chain.ts"

/** The full chain minus the console gate: an authenticated caller or the error to answer (401, 403 origin, 429). */
export const authenticated = (request: HttpServerRequest.HttpServerRequest, endpoint: string) =>
  Effect.flatMap(Edge, (edge) => edge.identify(request, endpoint))
