/**
 * Workflow discovery for the investigation agent. Step 1 lists the active action types that have at least one
 * active, latest-version workflow matching the signal context; step 2 lists those workflows for one action type.
 * (Step 3 is `GET /workflows/{id}` with the same context as a security gate.)
 */
import { PgClient } from "@effect/sql-pg"
import type { ActionTypeListResponse, DiscoveryQuery, StructuredDescription, WorkflowDiscoveryResponse } from "@kubemend/core/StorageApi"
import { Effect } from "effect"
import { orUnavailable } from "./Errors.ts"
import { Where } from "./Where.ts"
import { matchContext } from "./WorkflowRepo.ts"

const page = (q: DiscoveryQuery, total: number) => {
  const offset = q.offset ?? 0
  const limit = q.limit ?? 10
  return { totalCount: total, offset, limit, hasMore: offset + limit < total }
}

export class DiscoveryRepo extends Effect.Service<DiscoveryRepo>()("@kubemend/storage/DiscoveryRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient

    const candidates = (q: DiscoveryQuery) => matchContext(new Where(), q).add("status = 'Active'").add("is_latest_version")

    const listActions = (q: DiscoveryQuery) =>
      Effect.gen(function* () {
        const where = candidates(q)
        const pagination = page(q, 0)
        const o = where.bind(pagination.offset)
        const l = where.bind(pagination.limit)
        const rows = yield* sql.unsafe<{ action_type: string; description: StructuredDescription; workflow_count: number; total: number }>(
          `SELECT a.action_type, a.description, w.n AS workflow_count, count(*) OVER ()::int AS total
           FROM action_types a
           JOIN (SELECT action_type, count(*)::int AS n FROM workflows ${where.sql} GROUP BY action_type) w
             ON w.action_type = a.action_type
           WHERE a.status = 'Active'
           ORDER BY a.action_type OFFSET $${o} LIMIT $${l}`,
          where.params
        )
        const total = rows[0]?.total ?? (yield* countActions(q))
        return {
          actionTypes: rows.map((r) => ({ actionType: r.action_type, description: r.description, workflowCount: r.workflow_count })),
          pagination: page(q, total)
        } satisfies ActionTypeListResponse
      }).pipe(orUnavailable, Effect.withSpan("DiscoveryRepo.listActions"))

    const countActions = (q: DiscoveryQuery) => {
      const where = candidates(q)
      return sql
        .unsafe<{ total: number }>(
          `SELECT count(*)::int AS total FROM (SELECT DISTINCT action_type FROM workflows ${where.sql}) w
           JOIN action_types a ON a.action_type = w.action_type AND a.status = 'Active'`,
          where.params
        )
        .pipe(Effect.map((r) => r[0]?.total ?? 0))
    }

    const listWorkflows = (actionType: string, q: DiscoveryQuery) =>
      Effect.gen(function* () {
        const where = candidates(q).add("action_type = ?", actionType)
        const pagination = page(q, 0)
        const o = where.bind(pagination.offset)
        const l = where.bind(pagination.limit)
        const rows = yield* sql.unsafe<{ workflow_id: string; parsed: Record<string, unknown>; total: number }>(
          `SELECT workflow_id::text AS workflow_id, parsed, count(*) OVER ()::int AS total FROM workflows ${where.sql}
           ORDER BY workflow_name, version OFFSET $${o} LIMIT $${l}`,
          where.params
        )
        const total = rows[0]?.total ?? 0
        return {
          actionType,
          workflows: rows.map(({ parsed: p, workflow_id }) => ({
            workflowId: workflow_id,
            workflowName: p["workflowName"] as string,
            name: p["name"] as string,
            description: p["description"] as StructuredDescription,
            version: p["version"] as string,
            ...(typeof p["schemaVersion"] === "string" ? { schemaVersion: p["schemaVersion"] } : {}),
            ...(typeof p["executionBundle"] === "string" ? { executionBundle: p["executionBundle"] } : {}),
            ...(typeof p["executionEngine"] === "string" ? { executionEngine: p["executionEngine"] } : {}),
            ...(typeof p["serviceAccountName"] === "string" ? { serviceAccountName: p["serviceAccountName"] } : {})
          })),
          pagination: page(q, total)
        } satisfies WorkflowDiscoveryResponse
      }).pipe(orUnavailable, Effect.withSpan("DiscoveryRepo.listWorkflows"))

    return { listActions, listWorkflows } as const
  })
}) {}
