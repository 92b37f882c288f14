/**
 * Waiting on the local platform run as a child process (`npm start`). A start that fails says why in what the
 * platform printed, so every failure carries the tail of its output.
 */
import * as Fs from "node:fs"

interface Child {
  readonly exitCode: number | null
}

const failure = (message: string, output: () => string) => new Error(`${message}; its output ends:\n${output().slice(-4000)}`)

/** The JSON in `file` once the platform has written it (stack.json: it is ready). */
export const waitForStack = async (file: string, child: Child, output: () => string, deadlineMs: number) => {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    if (child.exitCode !== null) throw failure(`local platform exited with ${child.exitCode}`, output)
    if (Fs.existsSync(file)) return JSON.parse(Fs.readFileSync(file, "utf8"))
    await new Promise((r) => setTimeout(r, 100))
  }
  throw failure("local platform did not become ready", output)
}

/** Until the platform has printed a line matching `pattern`. */
export const waitForOutput = async (output: () => string, pattern: RegExp, child: Child, deadlineMs: number) => {
  const until = Date.now() + deadlineMs
  while (!pattern.test(output())) {
    if (child.exitCode !== null) throw failure(`local platform exited with ${child.exitCode}`, output)
    if (Date.now() > until) throw failure(`no ${pattern} in the output`, output)
    await new Promise((r) => setTimeout(r, 50))
  }
}
