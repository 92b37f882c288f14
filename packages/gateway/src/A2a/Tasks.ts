/**
 * The tasks the A2A agent has run or runs: a bounded in-memory table (finished tasks are forgotten after
 * `taskRetention`, and the oldest finished ones first when `maxTasks` is reached). Each task keeps its state,
 * history and artifacts for `tasks/get`, and a sliding PubSub of its events for streaming clients (a stalled
 * reader loses old progress events, never the final one, and never slows the loop). A task is
 * visible only to the user who started it: anyone else gets "task not found". Every change is also saved in the
 * shared state (SharedTasks.ts), so with Valkey any gateway replica answers `tasks/get` for it.
 */
import { Clock, Deferred, Duration, Effect, Fiber, FiberMap, Option, PubSub, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { TaskNotCancelable, TaskNotFound } from "@kubemend/core/Errors"
import { SharedState } from "../SharedState.ts"
import { A2aConfig } from "./Config.ts"
import type { Artifact, EventType, Task, TaskEvent, TaskState, TaskStatus, TaskView, TextMessage } from "./Model.ts"
import { terminalStates } from "./Model.ts"
import { taskRecords } from "./SharedTasks.ts"

/** What the table knows about a task besides the task itself. */
interface Running {
  finishedAt: number | undefined
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
}

interface Entry {
  readonly task: Task
  readonly running: Running
}

const iso = (millis: number) => new Date(millis).toISOString()

export class Tasks extends Effect.Service<Tasks>()("@kubemend/gateway/A2aTasks", {
  scoped: Effect.gen(function* () {
    const config = yield* A2aConfig
    const entries = new Map<string, Entry>()
    // A running task is saved on every change; the record outlives a task that runs to its deadline.
    const records = taskRecords(yield* SharedState, Duration.sum(config.taskTimeout, config.taskRetention))
    /** Per running task: waits for a cancel asked on another replica (none without Valkey). */
    const watchers = yield* FiberMap.make<string>()

    const evict = (now: number) => {
      const retention = Duration.toMillis(config.taskRetention)
      for (const [id, e] of entries) {
        if (e.running.finishedAt !== undefined && now - e.running.finishedAt >= retention) entries.delete(id)
      }
      for (const [id, e] of entries) {
        if (entries.size < config.maxTasks) break
        if (e.running.finishedAt !== undefined) entries.delete(id)
      }
    }

    const create = (owner: string, contextId: string, request: TextMessage) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        evict(now)
        const id = request.taskId
        const events = yield* PubSub.sliding<TaskEvent>(256)
        const finished = yield* Deferred.make<void>()
        const history: Array<TextMessage> = [request]
        const artifacts: Array<Artifact> = []
        let status: TaskStatus = { state: "submitted", timestamp: iso(now) }
        const running: Running = { finishedAt: undefined, fiber: undefined }

        const snapshot = (): TaskView => ({ id, contextId, status, artifacts: [...artifacts], history: [...history] })
        const save = Effect.suspend(() => records.save(owner, snapshot()))
        const agentMessage = (text: string): TextMessage => ({ messageId: randomUUID(), role: "agent", text, contextId, taskId: id })

        const publish = (state: TaskState, text: string | undefined, type: EventType, final: boolean, metadata: Record<string, unknown>) =>
          Effect.gen(function* () {
            const at = iso(yield* Clock.currentTimeMillis)
            const message = text === undefined ? undefined : agentMessage(text)
            status = { state, timestamp: at, ...(message === undefined ? {} : { message }) }
            if (final && message !== undefined) history.push(message)
            yield* save
            yield* PubSub.publish(events, {
              _tag: "Status",
              taskId: id,
              contextId,
              status,
              final,
              metadata: { ...metadata, type }
            })
          })

        const task: Task = {
          id,
          contextId,
          owner,
          view: Effect.sync(snapshot),
          isTerminal: Effect.sync(() => terminalStates.has(status.state)),
          progress: (type, text, metadata = {}) =>
            Effect.suspend(() =>
              terminalStates.has(status.state)
                ? Effect.void
                : type === "keepalive"
                ? PubSub.publish(events, {
                  _tag: "Status",
                  taskId: id,
                  contextId,
                  status: { state: "working", timestamp: status.timestamp },
                  final: false,
                  metadata: { ...metadata, type, dot: "." }
                }).pipe(Effect.asVoid)
                : publish("working", text, type, false, metadata)
            ),
          finish: (state, text, type, metadata = {}) =>
            Effect.suspend(() => {
              if (terminalStates.has(status.state)) return Effect.void
              return publish(state, text, type, true, metadata).pipe(
                Effect.zipRight(Clock.currentTimeMillis),
                Effect.tap((t) => Effect.sync(() => void (running.finishedAt = t))),
                Effect.zipRight(Deferred.succeed(finished, undefined)),
                Effect.asVoid
              )
            }),
          addArtifact: (name, text) =>
            Effect.suspend(() => {
              const artifact = { artifactId: randomUUID(), name, text }
              artifacts.push(artifact)
              return Effect.zipRight(save, PubSub.publish(events, { _tag: "Artifact", taskId: id, contextId, artifact })).pipe(Effect.asVoid)
            }),
          subscribe: Effect.gen(function* () {
            const queue = yield* PubSub.subscribe(events)
            const view = snapshot()
            const stream = terminalStates.has(view.status.state)
              ? Stream.empty
              : Stream.fromQueue(queue).pipe(Stream.takeUntil((e) => e._tag === "Status" && e.final))
            return { snapshot: view, events: stream }
          }),
          done: Deferred.await(finished),
          attach: (fiber) => Effect.sync(() => void (running.fiber = fiber))
        }
        entries.set(id, { task, running })
        yield* save
        yield* FiberMap.run(watchers, id, records.cancelRequested(id).pipe(Effect.zipRight(cancelLocal(id)), Effect.raceFirst(task.done)))
        return task
      })

    const lookup = (owner: string, id: string) =>
      Effect.suspend(() => {
        const entry = entries.get(id)
        return entry === undefined || entry.task.owner !== owner
          ? Effect.fail(new TaskNotFound({ taskId: id }))
          : Effect.succeed(entry)
      })

    /** Cancels this replica's running task `id`. */
    const cancelLocal = (id: string) =>
      Effect.gen(function* () {
        const entry = entries.get(id)
        if (entry === undefined || (yield* entry.task.isTerminal)) return
        // Canceled first: the loop's interruption must not be reported as a failure.
        yield* entry.task.finish("canceled", "The task was canceled.", "status")
        if (entry.running.fiber !== undefined) yield* Fiber.interrupt(entry.running.fiber)
      })

    /** This replica's task, else one another replica runs or ran (read-only here). */
    const find = (owner: string, id: string) =>
      lookup(owner, id).pipe(
        Effect.map((e) => e.task),
        Effect.catchTag("TaskNotFound", (e) => Effect.flatMap(records.find(owner, id), Option.match({ onNone: () => Effect.fail(e), onSome: Effect.succeed })))
      )

    return {
      create,
      get: find,
      /**
       * Stops the task's loop and marks it canceled; finished tasks cannot be canceled. A task another replica runs
       * is canceled there (SharedTasks.ts), and answered once that replica recorded it.
       */
      cancel: (owner: string, id: string) =>
        Effect.gen(function* () {
          const local = entries.get(id)
          if (local !== undefined && local.task.owner === owner) {
            if (yield* local.task.isTerminal) return yield* new TaskNotCancelable({ taskId: id, detail: "the task has already finished" })
            yield* cancelLocal(id)
            return local.task
          }
          const other = yield* find(owner, id)
          if (yield* other.isTerminal) return yield* new TaskNotCancelable({ taskId: id, detail: "the task has already finished" })
          return yield* records.cancelElsewhere(other)
        }),
      size: Effect.sync(() => entries.size),
      running: Effect.sync(() => [...entries.values()].filter((e) => e.running.finishedAt === undefined).length)
    } as const
  })
}) {}
