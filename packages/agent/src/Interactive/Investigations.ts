/**
 * Interactive investigations, one per RR, driven by one user at a time through the MCP tools. The user holds the
 * session's Lease; a second user's takeover moves the lease and abandons (never completes) the first user's
 * investigation; cancel (through the tool or the REST API) releases the lease and marks the AIAnalysis
 * `InteractiveCancelled`; complete needs a selected workflow and hands the result to the analysis controller
 * through the session.
 */
import { Cause, Clock, Effect, Exit, Fiber, Option, Ref, type Scope, Stream, SubscriptionRef } from "effect"
import { K8s } from "@kubemend/core/K8s"
import { message } from "@kubemend/core/Llm"
import { AgentConfig } from "../AgentConfig.ts"
import { Investigator } from "../Investigation/Investigator.ts"
import { Loop } from "../Investigation/Loop.ts"
import { incidentPrompt, interactiveSystemPrompt } from "../Investigation/Prompt.ts"
import { Audit } from "@kubemend/core/Audit"
import { ToolError } from "@kubemend/core/ToolError"
import { emit } from "../Investigation/Report.ts"
import { makeRun } from "../Investigation/Run.ts"
import { Sessions } from "../Sessions.ts"
import { isTerminal } from "../Sessions/Session.ts"
import type { Caller } from "./Callers.ts"
import { SessionLeases } from "./Leases.ts"
import { Registry } from "./Registry.ts"
import { type Analysis, announce, closingResponse, type InteractiveSession, markAnalysisCancelled, requestFor, sessionActive, view } from "./State.ts"
import * as Workflows from "./Workflows.ts"

type Reply = { readonly _tag: "Reply"; readonly text: string } | { readonly _tag: "Abandoned" } | { readonly _tag: "Failed"; readonly reason: string }

export class Investigations extends Effect.Service<Investigations>()("@kubemend/agent/Investigations", {
  scoped: Effect.gen(function* () {
    const config = yield* AgentConfig
    const k8s = yield* K8s
    const sessions = yield* Sessions
    const loop = yield* Loop
    const leases = yield* SessionLeases
    const investigator = yield* Investigator
    const audit = yield* Audit
    const workflows = yield* Workflows.make
    const scope: Scope.Scope = yield* Effect.scope
    const registry = yield* Registry

    const now = Effect.map(Clock.currentTimeMillis, (t) => new Date(t))
    const touch = (st: InteractiveSession) => Effect.flatMap(Clock.currentTimeMillis, (t) => Ref.set(st.lastActivity, t))
    const ended = (st: InteractiveSession) => Effect.map(Ref.get(st.session.state), isTerminal)
    const record = (st: InteractiveSession, type: string, action: string, who: string, data: Record<string, unknown> = {}) =>
      emit(audit, {
        type,
        action,
        outcome: "success",
        correlationId: st.rr,
        actor: { type: "user", id: who },
        data: { session_id: st.session.id, rr_id: st.rr, ...data }
      })

    /** One conversation turn under the session's lock; a takeover in between drops its result. */
    const turn = (st: InteractiveSession, input: string | undefined) => {
      const generation = st.generation
      return st.lock.withPermits(1)(
        Effect.gen(function* () {
          if (st.generation !== generation) return { _tag: "Abandoned" } as Reply
          if (input !== undefined) st.run.messages.push(message.user(input))
          yield* SubscriptionRef.set(st.analysis, "running")
          const fiber = yield* sessions.fork(st.session, loop.untilAnswer(st.run, st.run.turns + config.maxTurns))
          const exit = yield* Fiber.await(fiber)
          if (st.generation !== generation || Exit.isInterrupted(exit)) return { _tag: "Abandoned" } as Reply
          if (Exit.isFailure(exit)) {
            const reason = Option.match(Cause.failureOption(exit.cause), { onNone: () => "internal error", onSome: (e) => e.reason })
            yield* SubscriptionRef.set(st.analysis, "failed")
            yield* announce(st, { error: reason })
            return { _tag: "Failed", reason } as Reply
          }
          const outcome = exit.value
          const text = outcome._tag === "Answer" ? outcome.text : outcome.escalation.summary
          // An escalation inside a conversation is told to the user; the conversation goes on.
          st.run.escalation = undefined
          st.lastReply = text
          yield* SubscriptionRef.set(st.analysis, "answered")
          yield* announce(st)
          return { _tag: "Reply", text } as Reply
        })
      )
    }

    const keepAlive = (st: InteractiveSession) => {
      const holder = st.holder
      const generation = st.generation
      st.connected = true
      return leases.keepAlive(
        st.rr,
        holder,
        st.lastActivity,
        Effect.map(ended(st), (done) => !done && st.generation === generation),
        Effect.gen(function* () {
          if (st.generation !== generation) return
          st.connected = false
          // A lapse (the holder went quiet or lost the lease) is news to a subscriber; an ended session has said so.
          if (!(yield* ended(st))) yield* announce(st)
        })
      )
    }

    /** Gives the session to `who` with a fresh conversation and starts its opening analysis in the background. */
    const open = (rr: string, who: Caller, previous: InteractiveSession | undefined) =>
      Effect.gen(function* () {
        const object = yield* k8s.getCr("remediationrequests", rr).pipe(
          Effect.map(Option.some),
          Effect.catchTag("K8sNotFound", () => Effect.succeed(Option.none())),
          Effect.mapError((e) => new ToolError({ message: `cluster API unavailable: ${e.message}` }))
        )
        const reuse = previous !== undefined && !(yield* ended(previous)) ? Option.some(previous.session) : yield* sessions.findOpen(rr)
        const session = Option.isSome(reuse)
          ? reuse.value
          : yield* sessions.create(requestFor(rr, object), { interactive: true }).pipe(
            Effect.mapError((e) => new ToolError({ message: e.detail ?? "too many sessions" }))
          )
        yield* sessions.begin(session, who.user, who.groups)
        const st: InteractiveSession = {
          rr,
          session,
          generation: (previous?.generation ?? 0) + 1,
          holder: who.user,
          groups: who.groups,
          run: makeRun(session, [message.system(interactiveSystemPrompt), message.user(incidentPrompt(session.request))]),
          lastActivity: yield* Ref.make(yield* Clock.currentTimeMillis),
          connected: true,
          lock: yield* Effect.makeSemaphore(1),
          rrExists: Option.isSome(object),
          discovered: new Map(),
          selection: undefined,
          lastReply: undefined,
          // Running from here: a follower that asks before the opening turn took the lock still waits for it.
          analysis: yield* SubscriptionRef.make<Analysis>("running")
        }
        yield* registry.put(st)
        // Published after `put`, so the call's own follower delivers it; a takeover names whom it took it from.
        const from = previous !== undefined && previous.session === session && previous.holder !== who.user ? previous.holder : undefined
        yield* announce(st, from === undefined ? {} : { previous_holder: from })
        yield* keepAlive(st)
        // The opening analysis outlives the call that started it (a client may hang up); the call waits a while.
        const opening = yield* Effect.forkIn(turn(st, undefined), scope)
        return { st, opening }
      })

    /** The call's answer: the opening analysis when it ends within `startWait`, else that it goes on. */
    const answerStart = (st: InteractiveSession, opening: Fiber.Fiber<Reply>, message: string) =>
      Effect.flatMap(Effect.timeoutOption(Fiber.join(opening), config.interactive.startWait), (r) =>
        Option.match(r, {
          onNone: () => view(st, "active", { message: `${message}; the opening analysis continues` }),
          onSome: (r: Reply) =>
            view(st, "active", {
              message: r._tag === "Reply" ? r.text : r._tag === "Failed" ? `${message}; the opening analysis failed: ${r.reason}` : message
            })
        }))

    /** Stops the current holder's work: its turn is interrupted and its renewal ends. */
    const abandon = (st: InteractiveSession) =>
      Effect.gen(function* () {
        st.generation++
        st.connected = false
        yield* SubscriptionRef.update(st.analysis, (a) => (a === "running" ? "stopped" : a))
        yield* sessions.interrupt(st.session)
        yield* leases.stop(st.rr)
      })

    const acquire = (rr: string, who: Caller) =>
      leases.acquire(rr, who.user).pipe(
        Effect.as(Option.none<string>()),
        Effect.catchTag("K8sLeaseHeld", (e) => Effect.succeed(Option.some(e.holder))),
        Effect.mapError((e) => new ToolError({ message: `cluster API unavailable: ${e.message}` }))
      )

    const start = Effect.fn("Investigations.start")(function* (rr: string, who: Caller) {
      const held = yield* acquire(rr, who)
      if (Option.isSome(held)) return sessionActive(rr, held.value)
      const current = registry.get(rr)
      if (current !== undefined && !(yield* ended(current)) && current.holder === who.user) {
        yield* touch(current)
        if (!current.connected) yield* keepAlive(current)
        return yield* view(current, "active", { message: "already started; the investigation continues" })
      }
      // Anyone else's earlier session here has lapsed (we got its lease): it is abandoned, not completed.
      if (current !== undefined) yield* abandon(current)
      const { st, opening } = yield* open(rr, who, current)
      yield* record(st, "session.started", "started", who.user, current === undefined ? {} : { previous_holder: current.holder, join_mode: "reclaimed" })
      return yield* answerStart(st, opening, "investigation started")
    })

    const takeover = Effect.fn("Investigations.takeover")(function* (rr: string, who: Caller) {
      yield* leases.takeover(rr, who.user).pipe(Effect.mapError((e) => new ToolError({ message: `cluster API unavailable: ${e.message}` })))
      const current = registry.get(rr)
      if (current !== undefined && !(yield* ended(current)) && current.holder === who.user) {
        yield* touch(current)
        if (!current.connected) yield* keepAlive(current)
        return yield* view(current, "active", { message: "you already hold this session" })
      }
      if (current !== undefined) yield* abandon(current)
      const { st, opening } = yield* open(rr, who, current)
      yield* record(st, "session.takeover", "taken_over", who.user, {
        from_user: current?.holder ?? null,
        to_user: who.user,
        abandoned: current !== undefined
      })
      return yield* answerStart(st, opening, current === undefined ? "investigation started" : `taken over from ${current.holder}`)
    })

    /** The session `who` may act on: it exists, has not ended, is held by `who` and its lease is live. */
    const held = (rr: string, who: Caller) =>
      Effect.gen(function* () {
        const st = registry.get(rr)
        if (st === undefined) return yield* new ToolError({ message: `no interactive session for ${rr}; use action start` })
        if (yield* ended(st)) return yield* new ToolError({ message: `the interactive session of ${rr} has ended` })
        if (st.holder !== who.user) return yield* new ToolError({ message: `${st.holder} holds this session; use action takeover` })
        if (!st.connected) return yield* new ToolError({ message: "the session is disconnected; use action reconnect" })
        yield* touch(st)
        return st
      })

    const reply = (st: InteractiveSession, r: Reply) =>
      r._tag === "Reply"
        ? view(st, "active", { message: r.text })
        : Effect.fail(new ToolError({ message: r._tag === "Abandoned" ? "this investigation was taken over or stopped" : r.reason }))

    const send = Effect.fn("Investigations.message")(function* (rr: string, who: Caller, text: string) {
      const st = yield* held(rr, who)
      return yield* reply(st, yield* turn(st, text))
    })

    const status = Effect.fn("Investigations.status")(function* (rr: string) {
      const st = registry.get(rr)
      if (st === undefined) return { rr_id: rr, status: "disconnected", message: "no interactive session on this agent" }
      const s = yield* Ref.get(st.session.state)
      const value = s.status === "completed" ? "completed" : !isTerminal(s) && st.connected ? "active" : "disconnected"
      return yield* view(st, value, {
        session_status: s.status,
        ...(st.selection === undefined ? {} : { selected_workflow_id: st.selection.workflow["workflow_id"] })
      })
    })

    /**
     * Acts on nothing: waits until the RR's current turn has its answer (or failed, or was stopped), then answers
     * the status. The MCP route forwards the session's events while a call on the RR is open, so this is how a
     * caller keeps receiving them after the call that started the turn answered. Bounded by the investigation
     * timeout, as the turn is.
     */
    const follow = Effect.fn("Investigations.follow")(function* (rr: string) {
      const st = registry.get(rr)
      if (st !== undefined) {
        yield* st.analysis.changes.pipe(
          Stream.takeUntil((a) => a !== "running"),
          Stream.runDrain,
          Effect.timeoutOption(config.investigationTimeout)
        )
      }
      return yield* status(rr)
    })

    const reconnect = Effect.fn("Investigations.reconnect")(function* (rr: string, who: Caller) {
      const st = registry.get(rr)
      if (st === undefined || (yield* ended(st))) return yield* new ToolError({ message: `no open interactive session for ${rr}; use action start` })
      const taken = yield* acquire(rr, who)
      if (Option.isSome(taken)) return sessionActive(rr, taken.value)
      if (st.holder !== who.user) return yield* start(rr, who)
      yield* touch(st)
      if (!st.connected) yield* keepAlive(st)
      return yield* view(st, "active", { message: "reconnected" })
    })

    /** Ends the session for good: its turn stops, the lease is freed. */
    const close = (st: InteractiveSession) =>
      Effect.gen(function* () {
        const holder = st.holder
        yield* abandon(st)
        yield* leases.release(st.rr, holder).pipe(Effect.catchAll((e) => Effect.logWarning("lease release failed", e)))
      })

    /** Stops the session for good, frees its lease and marks its AIAnalysis; false when it had already ended. */
    const cancelHeld = (st: InteractiveSession, by: string, data: Record<string, unknown> = {}) =>
      Effect.gen(function* () {
        yield* close(st)
        if (!(yield* sessions.finish(st.session, { status: "cancelled", reason: `cancelled by ${by}` }))) return false
        yield* markAnalysisCancelled(k8s, st.rr, by, yield* now)
        yield* record(st, "session.cancelled", "cancelled", by, data)
        return true
      })

    const cancel = Effect.fn("Investigations.cancel")(function* (rr: string, who: Caller) {
      const st = yield* held(rr, who)
      yield* cancelHeld(st, who.user)
      return yield* view(st, "cancelled", { message: "investigation cancelled; the lease is released" })
    })

    /**
     * A REST cancel of a session: when an interactive investigation holds it, the same as its holder's cancel
     * (`Some`); otherwise `None` and the plain session cancel applies.
     */
    const cancelSession = Effect.fn("Investigations.cancelSession")(function* (sessionId: string) {
      const st = registry.bySession(sessionId)
      if (st === undefined || (yield* ended(st))) return Option.none<{ session_id: string; status: "cancelled" }>()
      const done = yield* cancelHeld(st, "an API request", { holder: st.holder, via: "rest" })
      return done ? Option.some({ session_id: sessionId, status: "cancelled" as const }) : Option.none()
    })

    const finishWith = (st: InteractiveSession, who: Caller, outcome: Parameters<typeof closingResponse>[2], status: string) =>
      Effect.gen(function* () {
        yield* close(st)
        const response = closingResponse(st, yield* now, outcome)
        yield* sessions.finish(st.session, { status: "completed", result: response })
        yield* investigator.report(st.run, Exit.succeed(response))
        yield* record(st, "session.completed", status, who.user, { outcome: response.investigation_outcome })
        return yield* view(st, status, { message: `investigation ${status.replace(/_/g, " ")}` })
      })

    const complete = Effect.fn("Investigations.complete")(function* (rr: string, who: Caller) {
      const st = yield* held(rr, who)
      if (st.selection === undefined) {
        return yield* new ToolError({ message: "no workflow selected: use discover_workflows and svc_select_workflow before completing" })
      }
      return yield* finishWith(st, who, { _tag: "workflow", selection: st.selection, user: who.user }, "completed")
    })

    const completeNoAction = Effect.fn("Investigations.completeNoAction")(function* (
      rr: string,
      who: Caller,
      reason: string | undefined,
      escalation: string | undefined
    ) {
      const st = yield* held(rr, who)
      return escalation === undefined || escalation.trim() === ""
        ? yield* finishWith(st, who, reason === undefined ? { _tag: "no_action" } : { _tag: "no_action", reason }, "completed_no_action")
        : yield* finishWith(st, who, { _tag: "escalated", reason: escalation }, "escalated")
    })

    const discover = Effect.fn("Investigations.discover")(function* (rr: string, who: Caller) {
      const st = yield* held(rr, who)
      const found = yield* workflows.discover(st)
      yield* record(st, "workflow.discovery", "discovered", who.user, { workflow_count: found.length })
      return { session_id: st.session.id, rr_id: rr, status: "active", workflows: found, count: found.length }
    })

    const select = Effect.fn("Investigations.select")(function* (
      rr: string,
      who: Caller,
      input: Omit<Parameters<typeof workflows.select>[1], "user">
    ) {
      const st = yield* held(rr, who)
      const chosen = yield* workflows.select(st, { ...input, user: who.user })
      if (chosen.created) {
        yield* record(st, "rr.created", "created", who.user, { rr_name: rr, target_kind: chosen.target.kind, target_name: chosen.target.name })
      }
      yield* record(st, "workflow.selected", "selected", who.user, { workflow_id: input.workflowId })
      return {
        ...(yield* view(st, "selected")),
        workflow_id: input.workflowId,
        rr_created: chosen.created,
        remediation_target: chosen.target,
        parameters: chosen.parameters,
        message: `workflow ${chosen.workflow.workflowName} selected${chosen.created ? `; RemediationRequest ${rr} created` : ""}`
      }
    })

    return { start, takeover, send, status, follow, reconnect, cancel, cancelSession, complete, completeNoAction, discover, select } as const
  })
}) {}
