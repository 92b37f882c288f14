/**
 * `start_autonomous` of `<prefix>_investigate`: the autonomous investigation of an existing RR, started on behalf of
 * the acting user (the session's `acting_user`). It takes no lease and nobody drives it: it runs like a submitted
 * investigation (same limits, same result at the REST endpoints). One runs per RR at a time; asking again answers
 * the running one (`already_running`).
 */
import { Effect, Option } from "effect"
import { Audit } from "@kubemend/core/Audit"
import { K8s } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { Investigator } from "../Investigation/Investigator.ts"
import { emit } from "../Investigation/Report.ts"
import { Sessions } from "../Sessions.ts"
import type { Caller } from "./Callers.ts"
import { requestFor } from "./State.ts"

export class Autonomous extends Effect.Service<Autonomous>()("@kubemend/agent/Autonomous", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const sessions = yield* Sessions
    const investigator = yield* Investigator
    const audit = yield* Audit

    const start = Effect.fn("Autonomous.start")(function* (rr: string, who: Caller) {
      const object = yield* k8s.getCr("remediationrequests", rr).pipe(
        Effect.mapError((e) =>
          new ToolError({ message: e._tag === "K8sNotFound" ? `remediation request ${rr} not found` : `cluster API unavailable: ${e.message}` })
        )
      )
      const running = yield* sessions.findOpen(rr, { interactive: false })
      if (Option.isSome(running)) {
        return { session_id: running.value.id, rr_id: rr, status: "already_running", message: `an autonomous investigation of ${rr} is already running` }
      }
      const session = yield* sessions.create(
        { ...requestFor(rr, Option.some(object)), interactive: false },
        { actingUser: who.user, actingUserGroups: who.groups }
      ).pipe(Effect.mapError((e) => new ToolError({ message: e.detail ?? "too many sessions" })))
      yield* sessions.run(session, investigator.investigate(session))
      yield* emit(audit, {
        type: "session.started",
        action: "started",
        outcome: "success",
        correlationId: rr,
        actor: { type: "user", id: who.user },
        data: { session_id: session.id, rr_id: rr, mode: "autonomous" }
      })
      return {
        session_id: session.id,
        rr_id: rr,
        status: "autonomous_started",
        acting_user: who.user,
        message: `autonomous investigation of ${rr} started; follow it by its session_id`
      }
    })

    return { start } as const
  })
}) {}
