/**
 * The A2A task model the gateway keeps, independent of the protocol version on the wire (A2A 0.3 JSON-RPC with
 * `kind` discriminators and lower-case states, or A2A 1.0 protobuf-JSON with `TASK_STATE_*`); Protocol.ts renders
 * it for each.
 */
import type { Effect, Fiber, Scope, Stream } from "effect"

export type TaskState = "submitted" | "working" | "completed" | "failed" | "canceled" | "input-required" | "rejected"

export const terminalStates: ReadonlySet<TaskState> = new Set(["completed", "failed", "canceled", "rejected"])

/** What a streamed status update is about (document 1, "A2A streaming events"). */
export type EventType = "reasoning" | "status" | "output" | "investigation" | "keepalive"

export interface TextMessage {
  readonly messageId: string
  readonly role: "user" | "agent"
  readonly text: string
  readonly contextId: string
  readonly taskId: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface TaskStatus {
  readonly state: TaskState
  readonly message?: TextMessage
  /** ISO 8601 UTC. */
  readonly timestamp: string
}

export interface Artifact {
  readonly artifactId: string
  readonly name: string
  readonly text: string
}

export interface TaskView {
  readonly id: string
  readonly contextId: string
  readonly status: TaskStatus
  readonly artifacts: ReadonlyArray<Artifact>
  readonly history: ReadonlyArray<TextMessage>
  readonly metadata?: Readonly<Record<string, unknown>>
}

/** One event of a task's stream, in order. */
export type TaskEvent =
  | {
    readonly _tag: "Status"
    readonly taskId: string
    readonly contextId: string
    readonly status: TaskStatus
    readonly final: boolean
    readonly metadata: Readonly<Record<string, unknown>> & { readonly type: EventType }
  }
  | { readonly _tag: "Artifact"; readonly taskId: string; readonly contextId: string; readonly artifact: Artifact }

/** The caller's message, decoded from either protocol version. */
export interface IncomingMessage {
  readonly messageId: string
  readonly text: string
  readonly contextId?: string
  readonly taskId?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface SendOptions {
  /** Answer at once with the submitted task instead of waiting for it to finish. */
  readonly returnImmediately: boolean
  /** Keep at most this many history messages in the answer. */
  readonly historyLength?: number
}

/** A task as the agent loop drives it: one running on this replica, or a read-only view of one on another (SharedTasks.ts). */
export interface Task {
  readonly id: string
  readonly contextId: string
  readonly owner: string
  readonly view: Effect.Effect<TaskView>
  readonly isTerminal: Effect.Effect<boolean>
  /** A progress event while working; `text` becomes the status message (unset for keepalives). */
  readonly progress: (type: EventType, text?: string, metadata?: Record<string, unknown>) => Effect.Effect<void>
  /** Moves to a terminal state with the agent's last message; later calls are ignored. */
  readonly finish: (state: TaskState, text: string, type: EventType, metadata?: Record<string, unknown>) => Effect.Effect<void>
  readonly addArtifact: (name: string, text: string) => Effect.Effect<void>
  /** Events from now on, ending after the final one; the current snapshot comes first. */
  readonly subscribe: Effect.Effect<{ readonly snapshot: TaskView; readonly events: Stream.Stream<TaskEvent> }, never, Scope.Scope>
  readonly done: Effect.Effect<void>
  readonly attach: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<void>
}
