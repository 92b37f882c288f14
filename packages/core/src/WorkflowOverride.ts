/**
 * What an approval's workflow override names. The RAR CRD's `status.workflowOverride.workflowName` names a
 * RemediationWorkflow; the catalog registers one under its `metadata.name` (the catalog's `workflowName`) with a
 * UUID id per registered version. The override resolves to the latest registered version of that name, which must
 * be Active. Older clients sent the catalog id: a UUID is accepted as one, since no RemediationWorkflow is expected
 * to carry another entry's id as its name; one that does is refused as ambiguous.
 */
import { Data, Effect, Option } from "effect"
import type { StorageError, StorageService } from "./Storage.ts"
import type { RemediationWorkflow } from "./StorageApi.ts"

/** The two catalog reads a resolution needs. */
export interface WorkflowCatalog<E> {
  /** Every entry registered under the name: all versions, any status. */
  readonly named: (name: string) => Effect.Effect<ReadonlyArray<RemediationWorkflow>, E>
  /** The entry with the id, none when the catalog has none. */
  readonly byId: (id: string) => Effect.Effect<Option.Option<RemediationWorkflow>, E>
}

export type OverrideRefusal = "UnknownWorkflow" | "WorkflowNotActive" | "AmbiguousWorkflow"

/** The override cannot be run; `message` is written for the approver and names the value. */
export class WorkflowOverrideRefused extends Data.TaggedError("WorkflowOverrideRefused")<{
  readonly value: string
  readonly reason: OverrideRefusal
  readonly message: string
}> {}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The version a name stands for: the one flagged latest, else the newest registration. */
const latestOf = (entries: ReadonlyArray<RemediationWorkflow>) =>
  entries.find((w) => w.isLatestVersion === true) ??
    [...entries].sort((a, b) => (b.createdAt ?? "").localeCompare(a.createdAt ?? ""))[0]

const refused = (value: string, reason: OverrideRefusal, message: string) => new WorkflowOverrideRefused({ value, reason, message })

const active = (value: string, w: RemediationWorkflow) =>
  w.status === "Active"
    ? Effect.succeed(w)
    : Effect.fail(
      refused(value, "WorkflowNotActive", `workflow override "${value}": RemediationWorkflow ${w.workflowName} ${w.version} is ${w.status} in the catalog`)
    )

/** The catalog entry an override runs, or why it cannot run. */
export const resolveWorkflowOverride = <E>(catalog: WorkflowCatalog<E>, value: string) =>
  Effect.gen(function* () {
    const named = (yield* catalog.named(value)).filter((w) => w.workflowName === value)
    const byId = uuid.test(value) ? yield* catalog.byId(value.toLowerCase()) : Option.none<RemediationWorkflow>()
    const latest = latestOf(named)
    if (latest !== undefined && Option.isSome(byId) && byId.value.workflowName !== value) {
      return yield* refused(
        value,
        "AmbiguousWorkflow",
        `workflow override "${value}" is both a RemediationWorkflow's name and the catalog id of ${byId.value.workflowName}`
      )
    }
    if (latest !== undefined) return yield* active(value, latest)
    if (Option.isSome(byId)) return yield* active(value, byId.value)
    return yield* refused(value, "UnknownWorkflow", `workflow override "${value}" names no RemediationWorkflow in the catalog`)
  })

/** The catalog reads over the storage client (a name's versions fit in one page: the catalog keeps few per name). */
export const storageCatalog = (storage: StorageService): WorkflowCatalog<StorageError> => ({
  named: (name) => Effect.map(storage.listWorkflows({ workflow_name: name, limit: 1000 }), (r) => r.workflows),
  byId: (id) => storage.getWorkflow(id).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeed(Option.none())))
})
