/**
 * Investigation events after the call returned, with the real agent: its opening analysis outlives
 * `svc_investigate` (the model is slower than `interactive.startWait`), and the analysis' tool call and its answer
 * reach the caller's MCP session (`notifications/message`) and the RR's status stream (`status/investigation`)
 * afterwards; a takeover reaches the previous holder, who gets nothing of the new holder's conversation. With the
 * fake agent (it serves the same stream, AgentContract.test.ts): a dropped stream is resumed after the agent is
 * back, without a gap, and a restarted agent that lost the session has the user told so.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option, Redacted } from "effect"
import { InfraLive, startTestGateway, token } from "./A2aHarness.ts"
import { call, connect } from "./support/Client.ts"
import { checkoutRca as rca, checkoutScripts as scripts, startRealAgent } from "./support/RealAgent.ts"
import { open, subscribeBody } from "./StatusSupport.ts"

const until = <A>(read: () => A, done: (a: A) => boolean, what: string) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 15_000
    for (let a = read();; a = read()) {
      if (done(a)) return a
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(a).slice(0, 2000)}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  })

layer(InfraLive, { excludeTestServices: true })("investigation events after the call", (it) => {
  it.scoped(
    "the opening analysis after svc_investigate returned reaches the MCP session and the status stream; a takeover ends the follow",
    () =>
      Effect.gen(function* () {
        const agent = yield* startRealAgent({ scripts, latencyMs: 150, startWait: Duration.millis(50) })
        const gw = yield* startTestGateway({ agentUrl: Option.some(agent.url), agentToken: { token: Redacted.make(agent.restToken) } })
        const sre = yield* connect(gw.url, yield* token("sre"))
        const aio = yield* connect(gw.url, yield* token("ai-orchestrator"))
        const rr_id = "rr-checkout-crash"
        const status = yield* open(gw.url, yield* token("sre"), subscribeBody(rr_id))

        const started = (yield* call(sre, "svc_investigate", { rr_id })).json
        assert.deepInclude(started, { status: "active", analysis: "running", holder: "sre-user" })
        const later = () => sre.notifications.map((n: any) => n.data).filter((d: any) => d.seq > started.event_seq)
        const answered = yield* until(later, (ds) => ds.some((d: any) => d.event === "interactive_state" && d.analysis === "answered"), "the analysis' answer")
        assert.isTrue(answered.some((d: any) => d.event === "tool_call" && d.name === "cluster_get"))
        assert.deepInclude(answered.find((d: any) => d.analysis === "answered"), { rr_id, session_id: started.session_id, summary: rca, holder: "sre-user" })
        // The same events on the RR's status stream, one line each.
        const investigation = () => status.frames().filter((f: any) => f.event === "status/investigation").map((f: any) => f.data.params)
        const streamed = yield* until(investigation, (ps) => ps.some((p: any) => p.analysis === "answered"), "status/investigation")
        assert.deepInclude(streamed.find((p: any) => p.event === "tool_call"), { rr_id, session_id: started.session_id, message: "calling cluster_get" })

        yield* call(aio, "svc_investigate", { rr_id, join_mode: "takeover" })
        const told = yield* until(later, (ds) => ds.some((d: any) => d.holder === "ai-orchestrator-user"), "the takeover")
        assert.deepInclude(told.find((d: any) => d.holder === "ai-orchestrator-user"), {
          event: "interactive_state",
          previous_holder: "sre-user",
          message: "ai-orchestrator-user took the session over from sre-user"
        })
        // The new holder's conversation is theirs: the previous holder's follow ended with the takeover.
        const seen = sre.notifications.length
        yield* call(aio, "svc_message", { rr_id, message: "and now?" })
        yield* until(
          () => aio.notifications.map((n: any) => n.data),
          (ds) => ds.some((d: any) => d.event === "interactive_state" && d.analysis === "answered"),
          "the new holder's turn"
        )
        yield* call(aio, "svc_cancel", { rr_id })
        yield* until(() => aio.notifications.map((n: any) => n.data), (ds) => ds.some((d: any) => d.event === "cancelled"), "the cancel")
        assert.strictEqual(sre.notifications.length, seen)
      }),
    { timeout: 60_000 }
  )

  it.scoped("a dropped stream resumes where it was once the agent is back; a restart that lost the session is told", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const sre = yield* connect(gw.url, yield* token("sre"))
      const aio = yield* connect(gw.url, yield* token("ai-orchestrator"))
      const rr_id = "rr-cache-pending"
      const started = (yield* call(sre, "svc_investigate", { rr_id })).json
      assert.strictEqual(started.status, "active")
      const events = () => sre.notifications.map((n: any) => n.data).filter((d: any) => d.rr_id === rr_id && d.seq > started.event_seq)

      yield* Effect.promise(() => gw.agent.stop())
      yield* Effect.promise(() => gw.agent.start())
      const taken = (yield* call(aio, "svc_investigate", { rr_id, join_mode: "takeover" })).json
      const told = yield* until(events, (ds) => ds.some((d: any) => d.holder === "ai-orchestrator-user"), "the takeover after the agent came back")
      assert.deepStrictEqual(told.map((d: any) => d.event), ["interactive_state"])

      // The agent restarts and forgets its sessions: the holder's follow finds the session gone.
      yield* Effect.promise(() => gw.agent.stop())
      gw.agent.forget()
      yield* Effect.promise(() => gw.agent.start())
      const lost = yield* until(() => aio.notifications.map((n: any) => n.data).filter((d: any) => d.session_id === taken.session_id), (ds) =>
        ds.some((d: any) => d.event === "session_lost"), "the lost session")
      assert.match(
        lost.find((d: any) =>
          d.event === "session_lost"
        ).message,
        /no longer has the session of rr-cache-pending/
      )
    }), { timeout: 30_000 })
})
