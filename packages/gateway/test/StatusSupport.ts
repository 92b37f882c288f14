/** Status-stream test helpers: RRs for the dev API server and an HTTP subscriber that records the frames it reads. */
import { Effect } from "effect"
import { namespace, parseSse } from "./A2aHarness.ts"

export const rr = (name: string, status: Record<string, unknown>) => ({
  apiVersion: "kubemend.io/v1alpha1",
  kind: "RemediationRequest",
  metadata: { name, namespace },
  spec: {
    signalName: "KubePodCrashLooping",
    signalFingerprint: "b".repeat(64),
    targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: "demo" }
  },
  status
})

export const subscribeBody = (rrId: unknown, method = "status/subscribe") => JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { rr_id: rrId } })

/**
 * An open status stream whose frames accumulate as they arrive: each complete frame is parsed once, so a stream of
 * thousands of large frames costs no more than reading it, and a frame cut between two reads is never parsed half.
 */
export const open = (url: string, bearer: string, body: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const controller = new AbortController()
      const res = await fetch(`${url}/a2a/status`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        body,
        signal: controller.signal
      })
      const received: Array<ReturnType<typeof parseSse>[number]> = []
      let pending = ""
      let ended = false
      const decoder = new TextDecoder()
      const reading = (async () => {
        const reader = res.body!.getReader()
        for (;;) {
          const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
          if (done) break
          pending += decoder.decode(value, { stream: true })
          const end = pending.lastIndexOf("\n\n")
          if (end >= 0) {
            received.push(...parseSse(pending.slice(0, end)))
            pending = pending.slice(end + 2)
          }
        }
        ended = true
      })()
      const frames = (): ReadonlyArray<ReturnType<typeof parseSse>[number]> => received
      const until = async (ok: (f: ReturnType<typeof frames>) => boolean, ms = 5000) => {
        const deadline = Date.now() + ms
        while (!ok(frames())) {
          if (Date.now() > deadline) throw new Error(`timed out; frames so far: ${JSON.stringify(received).slice(0, 4000)}`)
          await new Promise((r) => setTimeout(r, 10))
        }
        return frames()
      }
      return { res, frames, until, ended: () => ended, reading, abort: () => controller.abort() }
    }),
    (s) => Effect.sync(() => s.abort())
  )

export const updates = (frames: ReadonlyArray<ReturnType<typeof parseSse>[number]>) =>
  frames.filter((f) => "event" in f && f.event === "status/update").map((f) => ("data" in f ? f.data.params : undefined))
