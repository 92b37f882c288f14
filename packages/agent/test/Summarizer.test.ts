/**
 * The summarizer (CR `summarizer`) through REST with the scripted model: output above `threshold` tokens reaches
 * the model as a summary made by an extra LLM call; when that call fails the model gets the output cut at
 * `maxToolOutputSize` bytes with a marker; small output is untouched.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { KubeObject } from "@kubemend/core/K8s"
import { ScriptedLlm, type Script } from "@kubemend/devkit/ScriptedLlm"
import { AgentTest, appNs, auditEvents, awaitEnd, client, cluster, incident } from "./Harness.ts"

/** A pod whose last termination message is a long log. */
const chatty = (name: string, log: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: appNs, uid: `uid-${name}` },
  spec: { containers: [{ name: "app", image: "shop/chatty:1" }] },
  status: { phase: "Running", containerStatuses: [{ name: "app", restartCount: 7, lastState: { terminated: { reason: "OOMKilled", message: log } } }] }
})

const filler = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}: allocating buffer for request batch`).join("\n")
const summary = "The app container was OOMKilled 7 times while allocating request buffers."

const summarizes: Script = { name: "summarizer", match: "MARKER-SUMMARIZE-ME", turns: [{ text: summary }] }

const read = (pod: string, signal: string): Script => ({
  name: signal,
  match: `signal_name: ${signal}`,
  turns: [
    { toolCalls: [{ name: "cluster_get", arguments: { kind: "Pod", api_version: "v1", name: pod } }] },
    { json: { root_cause: "OOMKilled", confidence: 0.7, actionable: false } }
  ]
})

const threshold = 300
const maxBytes = 3000

/** The tool message the model got for its one tool call. */
const toolMessage = (signal: string) =>
  Effect.map(ScriptedLlm, (llm) => {
    const last = llm.requests.filter((r) => r.body?.messages?.[1]?.content?.includes(`signal_name: ${signal}`)).at(-1)!
    return String(last.body.messages.find((m: { role: string }) => m.role === "tool")?.content)
  })

const summarizerRequests = (marker: string) =>
  Effect.map(
    ScriptedLlm,
    (llm) =>
      llm.requests.filter((r) =>
        r.body?.messages?.some((m: { role: string; content?: string }) => m.role === "user" && m.content?.includes(marker))
        && r.body.messages[1]?.content?.startsWith("Summarize the following")
      )
  )

layer(
  AgentTest({
    scripts: [summarizes, read("chatty-ok", "LongOutput"), read("chatty-broken", "SummarizerDown"), read("checkout-7d9f-abcde", "ShortOutput")],
    seed: [
      ...cluster(),
      chatty("chatty-ok", `MARKER-SUMMARIZE-ME password=hunter2\n${filler(40)}`),
      chatty("chatty-broken", `MARKER-NO-SCRIPT\n${filler(120)}`)
    ],
    config: { summarizerThreshold: threshold, maxToolOutputSize: maxBytes }
  }),
  { excludeTestServices: true }
)("summarizer", (it) => {
  it.effect("output above the threshold reaches the model as the summarizer's summary", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("LongOutput") as never })
      assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
      const seen = yield* toolMessage("LongOutput")
      assert.match(seen, /^\[summary of cluster_get output of about \d+ tokens\]\n/)
      assert.include(seen, summary)
      assert.notInclude(seen, "allocating buffer for request batch")
      // The summarizer read the sanitised output: credentials scrubbed before any model sees them.
      const asked = yield* summarizerRequests("MARKER-SUMMARIZE-ME")
      assert.lengthOf(asked, 1)
      const input = String(asked[0]!.body.messages[1].content)
      assert.include(input, "line 39: allocating")
      assert.notInclude(input, "hunter2")
      assert.isUndefined(asked[0]!.body.tools)
      const complete = (yield* auditEvents).find((e) => e.event_type === "aiagent.response.complete" && e.event_data["session_id"] === session_id)
      assert.isAbove(complete?.event_data["total_prompt_tokens"] as number, 0)
    }))

  it.effect("when the summarizer fails the output is cut at maxToolOutputSize with a marker, and the result says so", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("SummarizerDown") as never })
      assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
      assert.lengthOf(yield* summarizerRequests("MARKER-NO-SCRIPT"), 1)
      const seen = yield* toolMessage("SummarizerDown")
      assert.notInclude(seen, "[summary of")
      const [kept, marker] = seen.split("\n[truncated: ")
      assert.strictEqual(Buffer.byteLength(kept!), maxBytes)
      assert.match(marker!, /^\d+ more bytes\]$/)
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.isTrue((result.warnings ?? []).some((w) => w.includes(`could not be summarized; it was cut to ${maxBytes} bytes`)))
    }))

  it.effect("output under the threshold is given to the model as it is", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("ShortOutput") as never })
      assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
      const seen = yield* toolMessage("ShortOutput")
      assert.isBelow(seen.length / 4, threshold)
      assert.strictEqual((JSON.parse(seen) as { metadata: { name: string } }).metadata.name, "checkout-7d9f-abcde")
    }))
})
