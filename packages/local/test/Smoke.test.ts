/**
 * The README's quick start, end to end: `npm start`'s program comes up on free ports with every API on HTTPS (a
 * client trusting another CA is refused), an MCP client trusting the devkit CA connects with the printed sre token, lists the tools and reads the seeded remediations, and SIGINT stops every process cleanly.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { checkMetrics, externalTool } from "@kubemend/devkit/ExternalTool"
import { serviceNamespaces } from "@kubemend/core/Metrics"
import { makeAuthority, validFor } from "@kubemend/core/Tls/Certificates"
import { trustAuthority, trustingDispatcher } from "@kubemend/core/Tls/Trust"
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { waitForOutput, waitForStack } from "./LocalPlatform.ts"

const root = Path.resolve(__dirname, "..", "..", "..")
const promtool = externalTool("promtool", ["--version"], "Debian's prometheus package")
if (promtool.skip) console.warn(`Smoke.test.ts: promtool checks skipped: ${promtool.missing}`)

// LOCAL_SMOKE_BUILT=true runs the same journey on the output of `npm run build` (.ci/run does, after building):
// the platform and every service it starts run as plain node on dist/, with no TypeScript tooling.
const built = process.env["LOCAL_SMOKE_BUILT"] === "true"
const entry = built
  ? ["--conditions=kubemend-dist", "--enable-source-maps", Path.join(root, "packages/local/dist/main.js")]
  : ["--import", "tsx", Path.join(root, "packages/local/src/main.ts")]

/** Command lines of the processes started with this state directory in their environment (Linux /proc). */
const processesOf = (state: string) =>
  Fs.readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
    try {
      if (!Fs.readFileSync(`/proc/${pid}/environ`, "utf8").includes(`LOCAL_STATE_DIR=${state}\0`)) return []
      return [Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()]
    } catch {
      return []
    }
  })

describe("local platform (npm start)", () => {
  it(`serves MCP with the printed token and stops cleanly on Ctrl-C (${built ? "built JavaScript" : "TypeScript sources"})`, { timeout: 300_000 }, async () => {
    const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-local-"))
    Fs.chmodSync(state, 0o755)
    const child = spawn(process.execPath, entry, {
      cwd: root,
      env: { ...process.env, LOCAL_PORTS: "auto", LOCAL_QUIET: "true", LOCAL_STATE_DIR: state },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    try {
      const stack = await waitForStack(Path.join(state, ".local", "stack.json"), child, () => output, 150_000)
      expect(Object.keys(stack.tokens)).toEqual(expect.arrayContaining(["sre", "remediation-approver", "no-console"]))
      // The summary is printed just after stack.json is written; its chunk may still be on its way.
      await waitForOutput(() => output, /Kubemend is running/, child, 30_000)
      // Every API is HTTPS with a certificate from the devkit CA: a client trusting another CA, or only the
      // system roots, is refused in the handshake, and the services' own configs call each other over https.
      expect(stack.tls.caFile).toBe(Path.join(state, ".local", "tls", "ca.crt"))
      expect(output).toContain(`NODE_EXTRA_CA_CERTS=${stack.tls.caFile}`)
      const stranger = await makeAuthority("not-the-platform", validFor(new Date(), 1))
      const apis = ["gateway", "agent", "storage", "signals"] as const
      for (const svc of apis) {
        expect(stack[svc].url, svc).toMatch(/^https:\/\//)
        for (const dispatcher of [trustingDispatcher([stranger.certPem]), trustingDispatcher([])]) {
          const refused = await fetch(`${stack[svc].url}/`, { dispatcher } as RequestInit).then(() => "", (e) => e.cause?.code)
          expect(refused, svc).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE")
        }
        const config = Fs.readFileSync(Path.join(state, ".local", `${svc}.yaml`), "utf8")
        for (const peer of apis) expect(config, `${svc} -> ${peer}`).not.toContain(stack[peer].url.replace("https:", "http:"))
        expect(config).toContain(`caFile: ${stack.tls.caFile}`)
      }
      // The policy engine the controllers ask is HTTPS from the same CA.
      expect(stack.policy.url).toMatch(/^https:\/\//)
      const refusedPolicy = await fetch(`${stack.policy.url}/health`, { dispatcher: trustingDispatcher([stranger.certPem]) } as RequestInit)
        .then(() => "", (e) => e.cause?.code)
      expect(refusedPolicy).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE")
      trustAuthority("local", Fs.readFileSync(stack.tls.caFile, "utf8"))
      expect((await fetch(`${stack.policy.url}/health`)).status).toBe(200)
      if (built) {
        const commands = processesOf(state)
        // The platform itself (packages/local/dist/main.js) and the five services it starts, each from its dist/.
        const fromDist = commands.flatMap((c) => c.match(/packages\/([a-z]+)\/dist\/main\.js/)?.slice(1) ?? []).sort()
        expect(fromDist).toEqual(["agent", "console", "gateway", "local", "signals", "storage"])
        expect(commands.filter((c) => /tsx|\.ts( |$)/.test(c))).toEqual([])
      }

      const transport = new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${stack.tokens.sre}` } }
      })
      const client = new Client({ name: "smoke", version: "1.0.0" })
      await client.connect(transport)
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["svc_list_remediations", "svc_approve", "svc_list_alerts"]))
      expect(tools.tools).toHaveLength(23)
      const result = await client.callTool({ name: "svc_list_remediations", arguments: {} })
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      const listed = JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
      expect(listed.remediations.map((r: { id: string }) => r.id)).toContain("rr-checkout-oom")
      await client.close()
      // The A2A surface is up too: the public shell card, and the full card for an authenticated caller.
      const card = await (await fetch(`${stack.gateway.url}/.well-known/agent-card.json`)).json()
      expect(card.skills).toEqual([])
      const scoped = await (await fetch(`${stack.gateway.url}/.well-known/agent-card.json`, {
        headers: { Authorization: `Bearer ${stack.tokens.sre}` }
      })).json()
      expect(scoped.skills.length).toBeGreaterThan(0)
      // Every service's scrape document: the default process series in the service's namespace, none unprefixed;
      // the gateway's all af_ but audit_events_dropped_total (document 1); valid for Prometheus (promtool check
      // metrics, when promtool is installed; required under CI).
      for (const svc of ["gateway", "agent", "storage", "signals", "console"] as const) {
        const body = await (await fetch(`${stack[svc].metricsUrl}/metrics`)).text()
        const names = [...new Set(body.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((l) => l.split(/[{ ]/)[0]!))]
        const prefix = serviceNamespaces[svc]!
        expect(names, svc).toContain(`${prefix}process_cpu_user_seconds_total`)
        expect(names.filter((n) => /^(process|nodejs)_/.test(n)), svc).toEqual([])
        if (svc === "gateway") expect(names.filter((n) => !n.startsWith("af_") && n !== "audit_events_dropped_total")).toEqual([])
        // The agent's alignmentCircuitBreakerTotal is named by document 3 as the original exposes it.
        if (!promtool.skip) checkMetrics(promtool, body, ["alignmentCircuitBreakerTotal"])
      }
      // The console serves its app behind sign-in: a browser without a session is sent to the dev issuer's page.
      const signIn = await fetch(`${stack.console.url}/remediations`, { redirect: "manual" })
      expect(signIn.headers.get("location")).toBe("/oauth2/sign_in?rd=%2Fremediations")
      const toIssuer = await fetch(new URL(signIn.headers.get("location")!, stack.console.url), { redirect: "manual" })
      expect(toIssuer.headers.get("location")).toMatch(new RegExp(`^${stack.issuer.url}/authorize\\?`))
      // The summary's promised line: the operator took the platform CR to Running.
      const until = Date.now() + 120_000
      while (!/platform CR kubemend-system\/kubemend is Running/.test(output) && Date.now() < until) await new Promise((r) => setTimeout(r, 200))
      expect(output).toMatch(/platform CR kubemend-system\/kubemend is Running \(\d+\.\d s after ready\)/)
      child.kill("SIGINT")
      expect(await exited).toBe(0)
      // Every service process went down with it: nothing answers on their health ports any more.
      for (const svc of ["gateway", "agent", "storage"] as const) {
        await expect(fetch(`${stack[svc].healthUrl}/healthz`)).rejects.toThrow()
      }
    } finally {
      // A failed run still stops the platform the graceful way, so its services (each in a process group of its
      // own) stop with it; SIGKILL only if that does not end it.
      if (child.exitCode === null) {
        child.kill("SIGTERM")
        const stopped = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 60_000))])
        if (!stopped) child.kill("SIGKILL")
      }
    }
  })
})
