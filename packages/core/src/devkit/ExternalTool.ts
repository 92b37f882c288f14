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
}

export const externalTool = (command: string, versionArgs: ReadonlyArray<string>, hint: string): ExternalTool => {
  const probe = spawnSync(command, [...versionArgs], { encoding: "utf8" })
  const missing = probe.error !== undefined || probe.status !== 0 ? `${command} is not installed (${hint})` : undefined
  return {
    missing,
    skip: missing !== undefined && process.env["CI"] === undefined,
    run: (args, input) => {
      if (missing !== undefined) throw new Error(`CI is set but ${missing}`)
      const result = spawnSync(command, [...args], { encoding: "utf8", input, maxBuffer: 64 * 1024 * 1024 })
      if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}: ${result.stderr}${result.stdout}`)
      return result.stdout
    }
  }
}
