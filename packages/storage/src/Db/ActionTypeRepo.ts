/**
 * The action-type taxonomy (`action_types`): idempotent registration (re-enables a disabled type), description
 * updates, soft disable (refused while active workflows use the type), active workflow counts.
 */
import { PgClient } from "@effect/sql-pg"
import { Data, Effect } from "effect"
import { NotFound } from "@kubemend/core/Errors"
import type { ActionTypeCreateRequest, ActionTypeCreateResponse, StructuredDescription } from "@kubemend/core/StorageApi"
import { orUnavailable } from "./Errors.ts"

/** Disable refused: active workflows depend on the type (or it is already disabled). */
export class ActionTypeInUse extends Data.TaggedError("ActionTypeInUse")<{
  readonly actionType: string
  readonly dependentWorkflows: ReadonlyArray<string>
  readonly detail: string
}> {}

interface ActionTypeRow {
  readonly action_type: string
  readonly description: StructuredDescription
  readonly status: string
}

const descriptionFields = ["what", "whenToUse", "whenNotToUse", "preconditions"] as const

export class ActionTypeRepo extends Effect.Service<ActionTypeRepo>()("@kubemend/storage/ActionTypeRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient

    const find = (name: string) =>
      Effect.map(
        sql.unsafe<ActionTypeRow>(`SELECT action_type, description, status FROM action_types WHERE action_type = $1 FOR UPDATE`, [name]),
        (rows) => rows[0]
      )

    const create = (req: ActionTypeCreateRequest) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const inserted = yield* sql.unsafe<{ action_type: string }>(
              `INSERT INTO action_types (action_type, description, registered_by) VALUES ($1, $2::jsonb, $3)
               ON CONFLICT (action_type) DO NOTHING RETURNING action_type`,
              [req.name, JSON.stringify(req.description), req.registeredBy]
            )
            if (inserted.length > 0) return { actionType: req.name, status: "created", wasReenabled: false } satisfies ActionTypeCreateResponse
            const row = (yield* find(req.name))!
            if (row.status === "Disabled") {
              yield* sql.unsafe(
                `UPDATE action_types SET status = 'Active', description = $2::jsonb, disabled_at = NULL, disabled_by = NULL,
                   updated_at = now(), updated_by = $3 WHERE action_type = $1`,
                [req.name, JSON.stringify(req.description), req.registeredBy]
              )
              return { actionType: req.name, status: "reenabled", wasReenabled: true } satisfies ActionTypeCreateResponse
            }
            return { actionType: req.name, status: "exists", wasReenabled: false } satisfies ActionTypeCreateResponse
          })
        )
        .pipe(orUnavailable, Effect.withSpan("ActionTypeRepo.create"))

    const update = (name: string, description: StructuredDescription, updatedBy: string | undefined) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const row = yield* find(name)
            if (row === undefined || row.status !== "Active") return yield* new NotFound({ resource: "action type", id: name })
            yield* sql.unsafe(`UPDATE action_types SET description = $2::jsonb, updated_by = $3, updated_at = now() WHERE action_type = $1`, [
              name,
              JSON.stringify(description),
              updatedBy ?? null
            ])
            return {
              actionType: name,
              oldDescription: row.description,
              newDescription: description,
              updatedFields: descriptionFields.filter((f) => row.description[f] !== description[f])
            }
          })
        )
        .pipe(orUnavailable, Effect.withSpan("ActionTypeRepo.update"))

    const activeWorkflows = (name: string) =>
      sql.unsafe<{ workflow_name: string }>(
        `SELECT DISTINCT workflow_name FROM workflows WHERE action_type = $1 AND status = 'Active' ORDER BY workflow_name`,
        [name]
      )

    const disable = (name: string, disabledBy: string) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const row = yield* find(name)
            if (row === undefined) return yield* new NotFound({ resource: "action type", id: name })
            if (row.status === "Disabled") {
              return yield* new ActionTypeInUse({ actionType: name, dependentWorkflows: [], detail: `action type ${name} is already disabled` })
            }
            const dependents = (yield* activeWorkflows(name)).map((r) => r.workflow_name)
            if (dependents.length > 0) {
              return yield* new ActionTypeInUse({
                actionType: name,
                dependentWorkflows: dependents,
                detail: `action type ${name} is used by ${dependents.length} active workflow(s)`
              })
            }
            yield* sql.unsafe(
              `UPDATE action_types SET status = 'Disabled', disabled_at = now(), disabled_by = $2, updated_at = now() WHERE action_type = $1`,
              [name, disabledBy]
            )
            return { actionType: name, status: "Disabled" as const }
          })
        )
        .pipe(orUnavailable, Effect.withSpan("ActionTypeRepo.disable"))

    const workflowCount = (name: string) =>
      Effect.gen(function* () {
        const rows = yield* sql.unsafe<{ count: number }>(
          `SELECT (SELECT count(*)::int FROM workflows w WHERE w.action_type = a.action_type AND w.status = 'Active') AS count
           FROM action_types a WHERE a.action_type = $1`,
          [name]
        )
        if (rows.length === 0) return yield* new NotFound({ resource: "action type", id: name })
        return { count: rows[0]!.count }
      }).pipe(orUnavailable, Effect.withSpan("ActionTypeRepo.workflowCount"))

    /** The type's status, for workflow registration. */
    const statusOf = (name: string) =>
      sql
        .unsafe<{ status: string }>(`SELECT status FROM action_types WHERE action_type = $1`, [name])
        .pipe(Effect.map((rows) => rows[0]?.status), orUnavailable)

    return { create, update, disable, workflowCount, statusOf } as const
  })
}) {}
