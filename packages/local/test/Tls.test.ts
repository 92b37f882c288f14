/** The local platform's devkit CA survives restarts (a client told to trust it keeps working); certificates do not. */
import { servesFor } from "@kubemend/core/Tls/Certificates"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { localTls } from "../src/Tls.ts"

describe("local TLS", () => {
  it("keeps the CA in .local/tls across starts and issues each service a certificate for 127.0.0.1 and localhost", async () => {
    const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-local-tls-"))
    const first = await Effect.runPromise(localTls(state))
    const leaf = await Effect.runPromise(first.serving("storage"))
    const second = await Effect.runPromise(localTls(state))
    expect(second.caPem).toBe(first.caPem)
    expect(second.caFile).toBe(Path.join(state, "tls", "ca.crt"))
    expect(Fs.statSync(Path.join(state, "tls", "ca.key")).mode & 0o077).toBe(0)
    expect(Fs.statSync(leaf.keyFile).mode & 0o077).toBe(0)
    expect(servesFor(Fs.readFileSync(leaf.certFile, "utf8"), second.caPem, ["127.0.0.1", "localhost"])).toBe(true)
    Fs.rmSync(state, { recursive: true, force: true })
  })
})
