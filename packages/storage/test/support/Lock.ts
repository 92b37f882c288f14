/**
 * A cross-process lock file that names its owner, so a lock left by a run that was killed (Ctrl-C, a crash) is taken
 * over instead of blocking every later run. Test workers of one run and concurrent runs on one machine share it.
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"

export interface LockOptions {
  /** How long to wait for a live owner, in milliseconds. */
  readonly timeout?: number
}

/** An owner-less lock directory (what earlier versions made) this old has outlived any run that could hold it. */
const legacyMaxAgeMs = 120_000
const pollMs = 100

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but belongs to another user.
    return errno(e) === "EPERM"
  }
}

type Owner = { readonly kind: "pid"; readonly pid: number } | { readonly kind: "legacy"; readonly ageMs: number } | { readonly kind: "none" }

const readOwner = async (path: string): Promise<Owner> => {
  try {
    const pid = (JSON.parse(await Fs.readFile(path, "utf8")) as { pid?: unknown }).pid
    return typeof pid === "number" ? { kind: "pid", pid } : { kind: "legacy", ageMs: Infinity }
  } catch (e) {
    if (errno(e) === "ENOENT") return { kind: "none" }
    if (errno(e) === "EISDIR") return { kind: "legacy", ageMs: Date.now() - (await Fs.stat(path)).mtimeMs }
    return { kind: "legacy", ageMs: Infinity }
  }
}

/** Creates the lock with our pid already in it: the content is written first and linked into place atomically. */
const tryCreate = async (lock: string, token: string): Promise<boolean> => {
  const tmp = `${lock}.${process.pid}.${token}`
  await Fs.writeFile(tmp, JSON.stringify({ pid: process.pid, token }))
  try {
    await Fs.link(tmp, lock)
    return true
  } catch (e) {
    if (errno(e) === "EEXIST") return false
    throw e
  } finally {
    await Fs.rm(tmp, { force: true })
  }
}

/**
 * Removes a lock whose owner is gone. It is first renamed aside, so two waiters that both saw the dead owner cannot
 * both delete: the second renames nothing (ENOENT), or renames a fresh live lock, which it sees and puts back.
 */
const takeOver = async (lock: string, stale: Owner) => {
  const aside = `${lock}.stale.${process.pid}.${randomBytes(4).toString("hex")}`
  try {
    await Fs.rename(lock, aside)
  } catch (e) {
    if (errno(e) === "ENOENT") return
    throw e
  }
  const moved = await readOwner(aside)
  const same = stale.kind === "pid" ? moved.kind === "pid" && moved.pid === stale.pid : moved.kind === "legacy"
  if (!same) await Fs.link(aside, lock).catch(() => undefined)
  await Fs.rm(aside, { recursive: true, force: true })
}

/** Runs `f` holding `lock`; waits for a live owner up to `timeout` and takes over from a dead one. */
export const withLock = async <A>(lock: string, f: () => Promise<A>, options: LockOptions = {}): Promise<A> => {
  const token = randomBytes(6).toString("hex")
  const deadline = Date.now() + (options.timeout ?? 120_000)
  for (;;) {
    if (await tryCreate(lock, token)) break
    const owner = await readOwner(lock)
    const gone = owner.kind === "pid" ? !isAlive(owner.pid) : owner.kind === "legacy" && owner.ageMs > legacyMaxAgeMs
    if (gone) await takeOver(lock, owner)
    else if (owner.kind !== "none") {
      if (Date.now() > deadline) {
        const who = owner.kind === "pid" ? `held by live process ${owner.pid}` : "held by an earlier version's run"
        throw new Error(`timed out waiting for ${lock}, ${who}; remove the file if that process is not a test run`)
      }
      await sleep(pollMs)
    }
  }
  try {
    return await f()
  } finally {
    const owner = await Fs.readFile(lock, "utf8").catch(() => "")
    if (owner.includes(token)) await Fs.rm(lock, { force: true })
  }
}
