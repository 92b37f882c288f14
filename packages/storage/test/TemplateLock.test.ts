import { execFileSync, spawnSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { withLock } from "./support/Lock.ts"

/** The pid of a process that has already exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!

let dir: string
beforeEach(async () => {
  dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "kubemend-lock-test-"))
})
afterEach(() => Fs.rm(dir, { recursive: true, force: true }))

describe("the storage tests' template lock", () => {
  it("takes over a lock whose owner process is gone (a run stopped with Ctrl-C)", async () => {
    const lock = Path.join(dir, "template.lock")
    await Fs.writeFile(lock, JSON.stringify({ pid: deadPid() }))
    const started = Date.now()
    expect(await withLock(lock, async () => "ran")).toBe("ran")
    expect(Date.now() - started).toBeLessThan(5_000)
    await expect(Fs.access(lock)).rejects.toThrow()
  })

  it("takes over the owner-less lock directory older versions left behind", async () => {
    const lock = Path.join(dir, "template.lock")
    await Fs.mkdir(lock)
    const old = new Date(Date.now() - 10 * 60_000)
    await Fs.utimes(lock, old, old)
    expect(await withLock(lock, async () => "ran")).toBe("ran")
  })

  it("waits for a live owner and tells who holds it when the wait runs out", async () => {
    const lock = Path.join(dir, "template.lock")
    const holder = execFileSync("sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"]).toString().trim()
    try {
      await Fs.writeFile(lock, JSON.stringify({ pid: Number(holder) }))
      await expect(withLock(lock, async () => "ran", { timeout: 300 })).rejects.toThrow(`held by live process ${holder}`)
    } finally {
      process.kill(Number(holder))
    }
  })

  it("runs callers one at a time", async () => {
    const lock = Path.join(dir, "template.lock")
    let inside = 0
    let most = 0
    await Promise.all(Array.from({ length: 5 }, () =>
      withLock(lock, async () => {
        most = Math.max(most, ++inside)
        await new Promise((r) => setTimeout(r, 20))
        inside--
      })))
    expect(most).toBe(1)
  })
})
