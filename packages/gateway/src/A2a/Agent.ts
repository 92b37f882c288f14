/**
 * Runs A2A tasks: admits a message (LLM capacity, the caller's conversation), creates its task and runs the agent
 * loop in the background, bounded by `taskTimeout`. Agent failures end the task in state `failed`, never as a
 * JSON-RPC error. Audit: `a2a.task_started`, `triage.started`, then `a2a.task_completed` + `triage.completed`
 * or `a2a.task_failed`. A running task is in-flight work for the gateway's drain: once draining starts it has
 * `grace` to finish, then it fails as stopped by the shutdown, so its stream or blocking request ends in time.
 */
import { Cause, Deferred, Duration, Effect, FiberSet, Queue, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { bounded, type Shutdown } from "@kubemend/core/Drain"
import { LlmCapacityExhausted } from "@kubemend/core/Errors"
import { Llm } from "@kubemend/core/Llm"
import { K8s } from "@kubemend/core/K8s"
import { AgentSessionsClient } from "../AgentSessionsClient.ts"
import type { Caller } from "../Caller.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { redactMessage } from "../Redact.ts"
import { AgentTools } from "./AgentTools.ts"
import { A2aConfig } from "./Config.ts"
import { Contexts } from "./Contexts.ts"
import { runLoop, TurnLimitReached } from "./Loop.ts"
import type { IncomingMessage, Task } from "./Model.ts"
import { Tasks } from "./Tasks.ts"

/** The persona the caller's groups map to (reference facts §7); `sre` when none does. */
export const personaOf = (groups: ReadonlyArray<string>): string => {
  const table: ReadonlyArray<readonly [string, string]> = [
    ["sre", "sre"],
    ["ai-orchestrator", "orchestrator"],
    ["cicd", "cicd"],
    ["observability", "dashboard"],
    ["l3-audit", "audit"],
    ["remediation-approver", "approver"]
  ]
  for (const [group, persona] of table) if (groups.some((g) => g === group || g.endsWith(`-${group}`))) return persona
  return "sre"
}

/** The text of an agent notification (`notifications/message` params or their `data`). */
const notificationText = (params: unknown): string => {
  const p = (typeof params === "object" && params !== null ? params : { data: params }) as Record<string, unknown>
  const data = p.data ?? p
  if (typeof data === "string") return data
  const d = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>
  return typeof d.message === "string" ? d.message : typeof d.text === "string" ? d.text : JSON.stringify(data)
}

/** How long a started task waits for its request to subscribe before running anyway. */
const gateTimeout = Duration.seconds(10)

export class A2aAgent extends Effect.Service<A2aAgent>()("@kubemend/gateway/A2aAgent", {
  scoped: Effect.gen(function* () {
    const config = yield* A2aConfig
    const tasks = yield* Tasks
    const contexts = yield* Contexts
    const tools = yield* AgentTools
    const agentClient = yield* AgentSessionsClient
    const audit = yield* GatewayAudit
    const llm = yield* Llm
    const k8s = yield* K8s
    const fibers = yield* FiberSet.make()
    let running = 0

    /** The loop of one task, with the agent link that carries the investigation events of its tool calls. */
    const work = (task: Task, caller: Caller, text: string) =>
      Effect.scoped(Effect.gen(function* () {
        const events = yield* Queue.sliding<string>(64)
        const link = yield* agentClient.link((params) => void Queue.unsafeOffer(events, notificationText(params)))
        yield* Stream.fromQueue(events).pipe(
          Stream.runForEach((t) => task.progress("investigation", t)),
          Effect.forkScoped
        )
        const history = yield* contexts.history(task.contextId)
        const loopTools = tools.forTask({
          caller,
          sessionId: task.contextId,
          agent: link,
          notify: (data) => task.progress("investigation", notificationText(data))
        })
        return yield* runLoop(
          {
            task,
            history,
            text,
            persona: personaOf(caller.principal.groups),
            user: caller.principal.user,
            tools: loopTools
          },
          llm,
          config
        )
      }))

    const run = (task: Task, caller: Caller, text: string, method: string, gate: Deferred.Deferred<void>, shutdown: Shutdown) =>
      Effect.gen(function* () {
        yield* Deferred.await(gate).pipe(Effect.timeout(gateTimeout), Effect.ignore)
        const who = { userId: caller.principal.user, clientIp: caller.clientIp, correlationId: task.id }
        yield* audit.emit({ ...who, type: "a2a.task_started", outcome: "success", data: { method, task_id: task.id } })
        yield* audit.emit({
          ...who,
          type: "triage.started",
          outcome: "success",
          data: { persona: personaOf(caller.principal.groups), task_id: task.id, session_id: task.contextId }
        })
        const outcome = yield* work(task, caller, text).pipe(
          bounded({ shutdown, duration: config.taskTimeout, onTimeout: () => "timeout" as const, onShutdown: () => "shutdown" as const }),
          Effect.either
        )
        if (outcome._tag === "Right") {
          const { rrIds } = outcome.right
          const answer = outcome.right.answer === "" ? "(no answer)" : outcome.right.answer
          yield* task.addArtifact("answer", answer)
          yield* task.finish("completed", answer, "output", rrIds.length === 0 ? {} : { rr_ids: rrIds })
          yield* contexts.remember(task.contextId, text, answer)
          yield* audit.emit({
            ...who,
            type: "a2a.task_completed",
            outcome: "success",
            data: { task_id: task.id, ...(rrIds[0] === undefined ? {} : { rr_name: rrIds[0], rr_namespace: k8s.namespace }) }
          })
          yield* audit.emit({
            ...who,
            type: "triage.completed",
            outcome: "success",
            data: { task_id: task.id, triage_outcome: rrIds.length > 0 ? "rr_created" : "no_issue_found" }
          })
          return
        }
        const e = outcome.left
        if (e === "shutdown") {
          yield* task.finish("failed", "The task was stopped because the gateway is shutting down; send it again.", "status")
          yield* audit.emit({ ...who, type: "a2a.task_failed", outcome: "failure", data: { task_id: task.id, error: "gateway shutting down" } })
          return
        }
        const error = e === "timeout"
          ? `the task did not finish within ${Duration.format(config.taskTimeout)}`
          : e instanceof TurnLimitReached
          ? `no answer after ${e.turns} model turns`
          : `the model is unavailable: ${redactMessage(e.message)}`
        yield* task.finish("failed", `The agent could not complete the task: ${error}`, "status")
        yield* audit.emit({ ...who, type: "a2a.task_failed", outcome: "failure", data: { task_id: task.id, error } })
      }).pipe(
        Effect.onInterrupt(() => task.finish("failed", "The task was interrupted because the gateway is shutting down.", "status")),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Effect.logError("a2a task failed unexpectedly", cause).pipe(
              Effect.zipRight(task.finish("failed", "The agent could not complete the task: internal error.", "status"))
            )
        ),
        Effect.ensuring(Effect.sync(() => void running--))
      )

    /**
     * Admits the message and starts its task; the loop begins once `go` runs (after a streaming request has
     * subscribed) or after a short grace period.
     */
    const start = Effect.fn("A2aAgent.start")(function* (caller: Caller, incoming: IncomingMessage, method: string, shutdown: Shutdown) {
      if (running >= config.llmConcurrency) {
        return yield* new LlmCapacityExhausted({ detail: "all agent slots are busy, retry shortly" })
      }
      const contextId = yield* contexts.open(caller.principal.user, incoming.contextId)
      running++
      const task = yield* tasks.create(caller.principal.user, contextId, {
        messageId: incoming.messageId,
        role: "user",
        text: incoming.text,
        contextId,
        taskId: randomUUID(),
        ...(incoming.metadata === undefined ? {} : { metadata: incoming.metadata })
      }).pipe(Effect.onError(() => Effect.sync(() => void running--)))
      const gate = yield* Deferred.make<void>()
      const fiber = yield* FiberSet.run(fibers, shutdown.track(run(task, caller, incoming.text, method, gate, shutdown)))
      yield* task.attach(fiber)
      return { task, go: Deferred.succeed(gate, undefined).pipe(Effect.asVoid) }
    })

    return { start, running: Effect.sync(() => running) } as const
  })
}) {}
