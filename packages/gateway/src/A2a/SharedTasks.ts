/**
 * A2A tasks in the shared state (`SharedState`, the A2A SDK's TaskStore idea): the replica running a task writes
 * its snapshot on every change, so `tasks/get` and `tasks/resubscribe` on any other replica answer it. There a
 * task is read-only: its events are the changes seen by reading the record every `remotePollInterval` until the
 * task ends. A cancel asked there is a record the running replica looks for every `remotePollInterval`; the asker
 * answers once the task's record says it ended. Without Valkey nothing is written.
 */
import { Duration, Effect, Option, Schedule, Stream } from "effect"
import { TaskNotCancelable } from "@kubemend/core/Errors"
import type { SharedStateService } from "../Shared/Store.ts"
import type { Task, TaskEvent, TaskView } from "./Model.ts"
import { terminalStates } from "./Model.ts"

const remotePollInterval = Duration.seconds(1)

interface TaskRecord {
  readonly owner: string
  readonly view: TaskView
}

const recordKey = (id: string) => `a2a:task:${id}`
const cancelKey = (id: string) => `a2a:cancel:${id}`
/** How long a replica asking for a cancel waits for the running replica to record it. */
const cancelDeadline = Duration.seconds(10)

export const taskRecords = (shared: SharedStateService, ttl: Duration.Duration) => {
  const read = (id: string) => Effect.map(shared.get(recordKey(id)), Option.map((raw) => JSON.parse(raw) as TaskRecord))

  /** The events between two snapshots: new artifacts, then the status when it moved. */
  const changes = (before: TaskView, after: TaskView): ReadonlyArray<TaskEvent> => {
    const known = new Set(before.artifacts.map((a) => a.artifactId))
    const artifacts = after.artifacts.filter((a) => !known.has(a.artifactId)).map((artifact): TaskEvent => ({
      _tag: "Artifact",
      taskId: after.id,
      contextId: after.contextId,
      artifact
    }))
    const moved = after.status.timestamp !== before.status.timestamp || after.status.state !== before.status.state
    const final = terminalStates.has(after.status.state)
    const status: ReadonlyArray<TaskEvent> = moved
      ? [{ _tag: "Status", taskId: after.id, contextId: after.contextId, status: after.status, final, metadata: { type: final ? "output" : "status" } }]
      : []
    return [...artifacts, ...status]
  }

  /** A task another replica runs, as this one sees it. */
  const remote = (record: TaskRecord): Task => {
    const { id, contextId } = record.view
    const current = Effect.map(read(id), Option.match({ onNone: () => record.view, onSome: (r) => r.view }))
    const follow = (from: TaskView) =>
      Stream.paginateEffect(from, (last) =>
        Effect.map(Effect.zipRight(Effect.sleep(remotePollInterval), current), (next) => {
          const events = changes(last, next)
          return [events, terminalStates.has(next.status.state) ? Option.none() : Option.some(next)] as const
        })).pipe(Stream.flattenIterables)
    const ignored = () => Effect.void
    return {
      id,
      contextId,
      owner: record.owner,
      view: current,
      isTerminal: Effect.map(current, (v) => terminalStates.has(v.status.state)),
      progress: ignored,
      finish: ignored,
      addArtifact: ignored,
      attach: ignored,
      subscribe: Effect.map(current, (snapshot) => ({
        snapshot,
        events: terminalStates.has(snapshot.status.state) ? Stream.empty : follow(snapshot)
      })),
      done: current.pipe(
        Effect.repeat({ schedule: Schedule.spaced(remotePollInterval), until: (v) => terminalStates.has(v.status.state) }),
        Effect.asVoid
      )
    }
  }

  // One replica alone has every task in its own table (and its `maxTasks` bound stays the only one).
  if (shared.backend === "memory") {
    return {
      save: () => Effect.void,
      find: () => Effect.succeedNone,
      cancelRequested: () => Effect.never,
      cancelElsewhere: (task: Task) => Effect.fail(new TaskNotCancelable({ taskId: task.id, detail: "the task runs on another gateway replica" }))
    } as const
  }
  return {
    save: (owner: string, view: TaskView) => shared.put(recordKey(view.id), JSON.stringify({ owner, view } satisfies TaskRecord), ttl),
    /** Succeeds once another replica asked to cancel task `id` (this replica runs it). */
    cancelRequested: (id: string) =>
      shared.get(cancelKey(id)).pipe(Effect.repeat({ schedule: Schedule.spaced(remotePollInterval), until: Option.isSome }), Effect.asVoid),
    /** Asks the replica running `task` to cancel it; answers the task once it ended. */
    cancelElsewhere: (task: Task) =>
      shared.put(cancelKey(task.id), "cancel", cancelDeadline).pipe(
        Effect.zipRight(task.done),
        Effect.timeoutFail({
          duration: cancelDeadline,
          onTimeout: () => new TaskNotCancelable({ taskId: task.id, detail: "the gateway replica running the task did not take the cancel; retry" })
        }),
        Effect.as(task)
      ),
    /** The task `id` of `owner` that another replica wrote, if any. */
    find: (owner: string, id: string) => Effect.map(read(id), (r) => Option.filter(r, (x) => x.owner === owner).pipe(Option.map(remote)))
  } as const
}
