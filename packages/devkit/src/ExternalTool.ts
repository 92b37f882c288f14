/**
 * Tests that run an external command-line tool (kubectl, promtool): found on PATH, or skipped with the reason;
 * with `CI` set a missing tool fails the test instead of passing quietly.
 */
import { spawnSync } from "node:child_process"

export interface ExternalTool {
  /** Why the tool cannot be used, or undefined when it can. */
  readonly missing: string | undefined
  /** Skip (the tool is missing and this is not CI). */
  readonly skip: boolean
  /** Runs the tool; throws with its stderr when it exits non-zero. */
  readonly run: (args: ReadonlyArray<string>, input?: string) => string
  /** Runs the tool and answers its exit status and output (stdout then stderr). */
  readonly exec: (args: ReadonlyArray<string>, input?: string) => { readonly status: number | null; readonly output: string }
}

export const externalTool = (command: string, versionArgs: ReadonlyArray<string>, hint: string): ExternalTool => {
  const probe = spawnSync(command, [...versionArgs], { encoding: "utf8" })
  const missing = probe.error !== undefined || probe.status !== 0 ? `${command} is not installed (${hint})` : undefined
  const exec = (args: ReadonlyArray<string>, input: string | undefined) => {
    if (missing !== undefined) throw new Error(`CI is set but ${missing}`)
    const result = spawnSync(command, [...args], { encoding: "utf8", input, maxBuffer: 64 * 1024 * 1024 })
    return { status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}` }
  }
  return {
    missing,
    skip: missing !== undefined && process.env["CI"] === undefined,
    run: (args, input) => {
      const result = exec(args, input)
      if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}: ${result.output}`)
      return result.stdout
    },
    exec: (args, input) => {
      const result = exec(args, input)
      return { status: result.status, output: result.output }
    }
  }
}

/**
 * `promtool check metrics` on a scrape document: parse errors fail; lint findings (exit 3) fail unless each names a
 * metric in `fixedNames`, names the spec fixes for compatibility (e.g. the agent's `alignmentCircuitBreakerTotal`).
 */
export const checkMetrics = (promtool: ExternalTool, body: string, fixedNames: ReadonlyArray<string> = []): void => {
  const { status, output } = promtool.exec(["check", "metrics"], body)
  if (status === 0) return
  const findings = output.split("\n").filter((l) => l.trim() !== "")
  if (status === 3 && findings.every((l) => fixedNames.includes(l.split(" ")[0]!))) return
  throw new Error(`promtool check metrics exited ${status}: ${output}`)
}
