/**
 * The workflow catalog. A registration is keyed by `(workflow_name, version)` plus the content hash; the id is the
 * UUIDv5 of that hash. Registrations of one name serialize on an advisory lock so "same content" (200, no
 * duplicate), "changed content" (409) and "new version" (201, previous versions lose `isLatestVersion`) are
 * decided on a consistent view.
 */
import { PgClient } from "@effect/sql-pg"
import { ContentIntegrityViolation, NotFound, ValidationError } from "@kubemend/core/Errors"
import type { CreateWorkflowRequest, ParsedWorkflow, RemediationWorkflow, SignalContext, WorkflowListQuery, WorkflowStatus } from "@kubemend/core/StorageApi"
import { parseCustomLabels, parseWorkflowContent } from "@kubemend/core/StorageApi"
import { Effect, Either } from "effect"
import { orUnavailable } from "./Errors.ts"
import { Where } from "./Where.ts"

interface WorkflowRow {
  readonly workflow_id: string
  readonly content: string
  readonly content_hash: string
  readonly parsed: ParsedWorkflow
  readonly status: WorkflowStatus
  readonly status_reason: string | null
  readonly disabled_at: Date | null
  readonly disabled_by: string | null
  readonly disabled_reason: string | null
  readonly deprecation_notice: string | null
  readonly is_latest_version: boolean
  readonly previous_version: string | null
  readonly created_by: string | null
  readonly updated_by: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const columns = `workflow_id::text AS workflow_id, content, content_hash, parsed, status, status_reason, disabled_at,
  disabled_by, disabled_reason, deprecation_notice, is_latest_version, previous_version, created_by, updated_by,
  created_at, updated_at`

const opt = <K extends string>(key: K, value: string | null | undefined) =>
  (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: string }

export const toWorkflow = (r: WorkflowRow): RemediationWorkflow => {
  const { contentHash: _h, workflowId: _id, ...p } = r.parsed
  return {
    ...p,
    workflowId: r.workflow_id,
    content: r.content,
    contentHash: r.content_hash.trim(),
    status: r.status,
    ...opt("statusReason", r.status_reason),
    ...opt("disabledAt", r.disabled_at?.toISOString()),
    ...opt("disabledBy", r.disabled_by),
    ...opt("disabledReason", r.disabled_reason),
    ...opt("deprecationNotice", r.deprecation_notice),
    isLatestVersion: r.is_latest_version,
    ...opt("previousVersion", r.previous_version),
    ...opt("createdBy", r.created_by),
    ...opt("updatedBy", r.updated_by),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString()
  }
}

/** Adds the signal-context label filters: every given value must be declared by the workflow (or `*`). */
/** One mandatory label (a list in the record) accepts the value: case-insensitive, `*` matches anything. */
const listLabel = (key: string, extra = "") =>
  `EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE jsonb_typeof(parsed->'labels'->'${key}') WHEN 'array' ` +
  `THEN parsed->'labels'->'${key}' ELSE jsonb_build_array(parsed->'labels'->'${key}') END) d ` +
  `WHERE lower(d) IN (lower(?), '*'${extra}))`

/** Every custom label key the workflow declares is among the signal's with a shared value (see core customLabelsMatch). */
const customLabels = `NOT EXISTS (SELECT 1 FROM jsonb_each(coalesce(parsed->'customLabels', '{}'::jsonb)) c
  WHERE NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements_text(CASE jsonb_typeof(c.value) WHEN 'array' THEN c.value ELSE jsonb_build_array(c.value) END) d
    WHERE d = '*' OR lower(d) IN (
      SELECT lower(s) FROM jsonb_array_elements_text(CASE jsonb_typeof(?::jsonb -> c.key) WHEN 'array' THEN ?::jsonb -> c.key
        WHEN 'string' THEN jsonb_build_array(?::jsonb -> c.key) ELSE '[]'::jsonb END) s)))`

/**
 * The discovery filters as the core `labelMatches` / `customLabelsMatch` define them; a component matches by its
 * `group/version/Kind` or by the kind alone.
 */
export const matchContext = (
  where: Where,
  ctx: Pick<SignalContext, "severity" | "component" | "environment" | "priority" | "custom_labels">
) => {
  // Without custom labels in the query (an operator's listing) the custom-label condition is left out.
  const custom = ctx.custom_labels === undefined ? undefined : JSON.stringify(parseCustomLabels(ctx.custom_labels) ?? {})
  const kind = ctx.component?.slice(ctx.component.lastIndexOf("/") + 1)
  return where
    .add(listLabel("severity"), ctx.severity)
    .add(listLabel("component", ", lower(?)"), ctx.component, kind)
    .add(listLabel("environment"), ctx.environment)
    .add(listLabel("priority"), ctx.priority)
    .add(customLabels, custom, custom, custom)
}

export type RegisterOutcome = { readonly _tag: "Created" | "Unchanged"; readonly workflow: RemediationWorkflow }

export class WorkflowRepo extends Effect.Service<WorkflowRepo>()("@kubemend/storage/WorkflowRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient

    const byId = (id: string, where = new Where([id])) =>
      sql
        .unsafe<WorkflowRow>(`SELECT ${columns} FROM workflows WHERE workflow_id = $1 ${where.sql.replace(/^WHERE/, "AND")}`, where.params)
        .pipe(Effect.map((rows) => rows[0]))

    const register = (req: CreateWorkflowRequest) =>
      Effect.gen(function* () {
        const parsed = parseWorkflowContent(req.content)
        if (Either.isLeft(parsed)) return yield* new ValidationError({ field: "content", detail: parsed.left })
        const w = parsed.right
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql.unsafe(`SELECT pg_advisory_xact_lock(hashtext('workflow:' || $1))`, [w.workflowName])
            const status = yield* sql.unsafe<{ status: string }>(`SELECT status FROM action_types WHERE action_type = $1`, [w.actionType])
            if (status[0]?.status !== "Active") {
              return yield* new ValidationError({ field: "spec.actionType", detail: `unknown or disabled action type ${w.actionType}` })
            }
            const [existing] = yield* sql.unsafe<WorkflowRow>(
              `SELECT ${columns} FROM workflows WHERE workflow_name = $1 AND version = $2`,
              [w.workflowName, w.version]
            )
            if (existing !== undefined) {
              if (existing.content_hash.trim() !== w.contentHash) {
                return yield* new ContentIntegrityViolation({ name: w.workflowName, version: w.version })
              }
              if (existing.status !== "Disabled") return { _tag: "Unchanged", workflow: toWorkflow(existing) } satisfies RegisterOutcome
              const [reenabled] = yield* sql.unsafe<WorkflowRow>(
                `UPDATE workflows SET status = 'Active', status_reason = 'Re-registered', disabled_at = NULL, disabled_by = NULL,
                   disabled_reason = NULL, updated_at = now(), updated_by = $2 WHERE workflow_id = $1 RETURNING ${columns}`,
                [existing.workflow_id, req.registeredBy ?? null]
              )
              return { _tag: "Unchanged", workflow: toWorkflow(reenabled!) } satisfies RegisterOutcome
            }
            const [latest] = yield* sql.unsafe<{ version: string }>(
              `UPDATE workflows SET is_latest_version = false, updated_at = now()
               WHERE workflow_name = $1 AND is_latest_version RETURNING version`,
              [w.workflowName]
            )
            const [row] = yield* sql.unsafe<WorkflowRow>(
              `INSERT INTO workflows (workflow_id, workflow_name, version, action_type, content, content_hash, parsed,
                 previous_version, created_by, updated_by)
               VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $9) RETURNING ${columns}`,
              [
                w.workflowId,
                w.workflowName,
                w.version,
                w.actionType,
                req.content,
                w.contentHash,
                JSON.stringify(w),
                latest?.version ?? null,
                req.registeredBy ?? null
              ]
            )
            return { _tag: "Created", workflow: toWorkflow(row!) } satisfies RegisterOutcome
          })
        )
      }).pipe(orUnavailable, Effect.withSpan("WorkflowRepo.register"))

    const list = (q: WorkflowListQuery) =>
      Effect.gen(function* () {
        const where = matchContext(new Where(), q).add("status = ?", q.status).add("workflow_name = ?", q.workflow_name)
        const [{ total }] = yield* sql.unsafe<{ total: number }>(`SELECT count(*)::int AS total FROM workflows ${where.sql}`, where.params)
        const limit = q.limit ?? 100
        const offset = q.offset ?? 0
        const l = where.bind(limit)
        const o = where.bind(offset)
        const rows = yield* sql.unsafe<WorkflowRow>(
          `SELECT ${columns} FROM workflows ${where.sql} ORDER BY workflow_name, created_at DESC LIMIT $${l} OFFSET $${o}`,
          where.params
        )
        return { workflows: rows.map(toWorkflow), limit, offset, total: total! }
      }).pipe(orUnavailable, Effect.withSpan("WorkflowRepo.list"))

    /** With context filters this is the security gate: a workflow that does not match is "not found". */
    const get = (id: string, ctx: SignalContext = {}) =>
      Effect.gen(function* () {
        const row = yield* byId(id, matchContext(new Where([id]), ctx))
        if (row === undefined) return yield* new NotFound({ resource: "workflow", id })
        return toWorkflow(row)
      }).pipe(orUnavailable, Effect.withSpan("WorkflowRepo.get"))

    /** Status changes: the PATCH body, or the disable / enable / deprecate shortcuts. */
    const setStatus = (id: string, status: WorkflowStatus | undefined, by: string | undefined, reason: string | undefined) =>
      Effect.gen(function* () {
        const [row] = yield* sql.unsafe<WorkflowRow>(
          `UPDATE workflows SET
             status = coalesce($2::varchar, status),
             status_reason = coalesce($4::text, status_reason),
             disabled_at = CASE WHEN $2::varchar = 'Disabled' THEN now() WHEN $2::varchar IS NULL THEN disabled_at ELSE NULL END,
             disabled_by = CASE WHEN $2::varchar = 'Disabled' THEN $3::text WHEN $2::varchar IS NULL THEN disabled_by ELSE NULL END,
             disabled_reason = CASE WHEN $2::varchar = 'Disabled' THEN $4::text WHEN $2::varchar IS NULL THEN disabled_reason ELSE NULL END,
             deprecation_notice = CASE WHEN $2::varchar = 'Deprecated' THEN $4::text ELSE deprecation_notice END,
             updated_by = coalesce($3::text, updated_by),
             updated_at = now()
           WHERE workflow_id = $1 RETURNING ${columns}`,
          [id, status ?? null, by ?? null, reason ?? null]
        )
        if (row === undefined) return yield* new NotFound({ resource: "workflow", id })
        return toWorkflow(row)
      }).pipe(orUnavailable, Effect.withSpan("WorkflowRepo.setStatus"))

    return { register, list, get, setStatus } as const
  })
}) {}
