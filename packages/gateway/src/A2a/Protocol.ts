/**
 * Both A2A JSON-RPC dialects on one endpoint. The method name tells the version: A2A 0.3 (`message/send`,
 * `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`; `kind` discriminators, `final` on status
 * updates, lower-case states) or A2A 1.0, what current SDK clients send by default (`SendMessage`,
 * `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`; protobuf JSON with `TASK_STATE_*` and
 * `ROLE_*` enums, results wrapped as `{task}` / `{statusUpdate}` / `{artifactUpdate}`).
 */
import { Effect } from "effect"
import { InvalidParams } from "@kubemend/core/Errors"
import type { Artifact, IncomingMessage, SendOptions, TaskEvent, TaskState, TaskStatus, TaskView, TextMessage } from "./Model.ts"

export type Version = "0.3" | "1.0"

export type Operation = "send" | "stream" | "get" | "cancel" | "resubscribe" | "push" | "unsupported"

const methods: Readonly<Record<string, readonly [Operation, Version]>> = {
  "message/send": ["send", "0.3"],
  "message/stream": ["stream", "0.3"],
  "tasks/get": ["get", "0.3"],
  "tasks/cancel": ["cancel", "0.3"],
  "tasks/resubscribe": ["resubscribe", "0.3"],
  "tasks/pushNotificationConfig/set": ["push", "0.3"],
  "tasks/pushNotificationConfig/get": ["push", "0.3"],
  "tasks/pushNotificationConfig/list": ["push", "0.3"],
  "tasks/pushNotificationConfig/delete": ["push", "0.3"],
  "agent/getAuthenticatedExtendedCard": ["unsupported", "0.3"],
  SendMessage: ["send", "1.0"],
  SendStreamingMessage: ["stream", "1.0"],
  GetTask: ["get", "1.0"],
  CancelTask: ["cancel", "1.0"],
  SubscribeToTask: ["resubscribe", "1.0"],
  ListTasks: ["unsupported", "1.0"],
  GetExtendedAgentCard: ["unsupported", "1.0"],
  CreateTaskPushNotificationConfig: ["push", "1.0"],
  GetTaskPushNotificationConfig: ["push", "1.0"],
  ListTaskPushNotificationConfigs: ["push", "1.0"],
  DeleteTaskPushNotificationConfig: ["push", "1.0"]
}

export const operationOf = (method: string): readonly [Operation, Version] | undefined => Object.hasOwn(methods, method) ? methods[method] : undefined

type Json = Record<string, unknown>

const record = (u: unknown): Json => (typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Json) : {})
const nonEmpty = (u: unknown): string | undefined => (typeof u === "string" && u !== "" ? u : undefined)
const invalid = (detail: string) => new InvalidParams({ detail })

/** Text of the parts; data parts are passed to the model as JSON. Files are not something the agent can read. */
const textOfParts = (parts: unknown): Effect.Effect<string, InvalidParams> => {
  if (!Array.isArray(parts) || parts.length === 0) return Effect.fail(invalid("message.parts must be a non-empty array"))
  const texts: Array<string> = []
  for (const p of parts.map(record)) {
    if (typeof p.text === "string" && (p.kind === undefined || p.kind === "text")) texts.push(p.text)
    else if (p.data !== undefined && (p.kind === undefined || p.kind === "data")) texts.push(JSON.stringify(p.data))
    else return Effect.fail(invalid("only text and data parts are supported"))
  }
  const text = texts.join("\n").trim()
  return text === "" ? Effect.fail(invalid("the message has no text")) : Effect.succeed(text)
}

const userRoles: Record<Version, ReadonlyArray<unknown>> = { "0.3": ["user"], "1.0": ["ROLE_USER", 1] }

export const decodeSend = (version: Version, params: unknown) =>
  Effect.gen(function* () {
    const p = record(params)
    const m = record(p.message)
    const messageId = nonEmpty(m.messageId)
    if (messageId === undefined) return yield* invalid("message.messageId is required")
    if (!userRoles[version].includes(m.role)) return yield* invalid(`message.role must be ${userRoles[version][0]}`)
    const text = yield* textOfParts(m.parts)
    const contextId = nonEmpty(m.contextId)
    const taskId = nonEmpty(m.taskId)
    const metadata = p.metadata ?? m.metadata
    const message: IncomingMessage = {
      messageId,
      text,
      ...(contextId === undefined ? {} : { contextId }),
      ...(taskId === undefined ? {} : { taskId }),
      ...(typeof metadata === "object" && metadata !== null ? { metadata: metadata as Json } : {})
    }
    const c = record(p.configuration)
    const historyLength = typeof c.historyLength === "number" && c.historyLength >= 0 ? Math.floor(c.historyLength) : undefined
    // 0.3 says `blocking` (default false in the spec, the SDKs send true); 1.0 says `returnImmediately`.
    const returnImmediately = version === "0.3" ? c.blocking === false : c.returnImmediately === true
    const options: SendOptions = { returnImmediately, ...(historyLength === undefined ? {} : { historyLength }) }
    return { message, options }
  })

export const decodeTaskId = (params: unknown) =>
  Effect.gen(function* () {
    const p = record(params)
    const id = nonEmpty(p.id) ?? nonEmpty(p.name)?.replace(/^tasks\//, "")
    if (id === undefined) return yield* invalid("params.id is required")
    const historyLength = typeof p.historyLength === "number" && p.historyLength >= 0 ? Math.floor(p.historyLength) : undefined
    return { id, ...(historyLength === undefined ? {} : { historyLength }) }
  })

const v1State: Record<TaskState, string> = {
  submitted: "TASK_STATE_SUBMITTED",
  working: "TASK_STATE_WORKING",
  completed: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
  "input-required": "TASK_STATE_INPUT_REQUIRED",
  rejected: "TASK_STATE_REJECTED"
}

const metadataOf = (m: Readonly<Record<string, unknown>> | undefined) => (m === undefined ? {} : { metadata: m })

const message = (v: Version, m: TextMessage): Json =>
  v === "0.3"
    ? {
      kind: "message",
      messageId: m.messageId,
      role: m.role,
      parts: [{ kind: "text", text: m.text }],
      contextId: m.contextId,
      taskId: m.taskId,
      ...metadataOf(m.metadata)
    }
    : {
      messageId: m.messageId,
      contextId: m.contextId,
      taskId: m.taskId,
      role: m.role === "user" ? "ROLE_USER" : "ROLE_AGENT",
      parts: [{ text: m.text }],
      ...metadataOf(m.metadata)
    }

const status = (v: Version, s: TaskStatus): Json => ({
  state: v === "0.3" ? s.state : v1State[s.state],
  ...(s.message === undefined ? {} : { message: message(v, s.message) }),
  timestamp: s.timestamp
})

const artifact = (v: Version, a: Artifact): Json => ({
  artifactId: a.artifactId,
  name: a.name,
  parts: [v === "0.3" ? { kind: "text", text: a.text } : { text: a.text }]
})

export const task = (v: Version, t: TaskView, historyLength?: number): Json => {
  const history = historyLength === undefined ? t.history : historyLength === 0 ? [] : t.history.slice(-historyLength)
  return {
    ...(v === "0.3" ? { kind: "task" } : {}),
    id: t.id,
    contextId: t.contextId,
    status: status(v, t.status),
    ...(t.artifacts.length === 0 ? {} : { artifacts: t.artifacts.map((a) => artifact(v, a)) }),
    ...(history.length === 0 ? {} : { history: history.map((m) => message(v, m)) }),
    ...metadataOf(t.metadata)
  }
}

/** The result of `message/send` / `SendMessage`. */
export const sendResult = (v: Version, t: TaskView, historyLength?: number): Json =>
  v === "0.3" ? task(v, t, historyLength) : { task: task(v, t, historyLength) }

/** One stream element: the task snapshot first, then its events. */
export const streamTask = (v: Version, t: TaskView): Json => (v === "0.3" ? task(v, t) : { task: task(v, t) })

export const streamEvent = (v: Version, e: TaskEvent): Json => {
  if (e._tag === "Artifact") {
    const body = { taskId: e.taskId, contextId: e.contextId, artifact: artifact(v, e.artifact) }
    return v === "0.3" ? { kind: "artifact-update", ...body, lastChunk: true } : { artifactUpdate: { ...body, lastChunk: true } }
  }
  const body = { taskId: e.taskId, contextId: e.contextId, status: status(v, e.status), metadata: e.metadata }
  return v === "0.3" ? { kind: "status-update", ...body, final: e.final } : { statusUpdate: body }
}
