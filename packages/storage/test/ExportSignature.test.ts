/**
 * Export signatures anyone can verify, later: the signing key persists in `export.signingKeyFile` (created when
 * missing), so an export made before a restart verifies after it — checked with the `openssl` binary and the
 * README's recipe (sed + openssl), against the PEM key the restarted service publishes. A changed byte fails.
 */
import { it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe } from "vitest"
import { auditEvent, Harness, harnessLayer, json } from "./support/Harness.ts"

/** The README's verification recipe, run as written. */
const recipe = (dir: string) => `
set -e
cd "${dir}"
sed 's/,"detached_signature":"[^"]*"}$/}/' export.json > signed.json
sed -n 's/.*"detached_signature":"\\([^"]*\\)"}$/\\1/p' export.json | openssl base64 -d -A > export.sig
openssl dgst -sha256 -verify export-key.pem -signature export.sig signed.json
`

const verify = (dir: string) => {
  try {
    return execFileSync("sh", ["-c", recipe(dir)], { encoding: "utf8" }).trim()
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e).trim()
  }
}

const withService = <A, E>(keyFile: string, use: (h: Context.Tag.Service<Harness>) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.gen(function* () {
    const ctx = yield* Layer.build(harnessLayer((base) => ({ export: { ...base.export, signingKeyFile: Option.some(keyFile) } })))
    return yield* use(Context.get(ctx, Harness))
  }))

describe("export signatures", () => {
  it.live("an export made before a restart verifies after it with openssl; a changed byte does not", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-export-"))
      const keyFile = Path.join(dir, "keys", "export-signing-key.pem")

      const exported = yield* withService(keyFile, (h) =>
        Effect.gen(function* () {
          const written = yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json([auditEvent({ correlation_id: "rr-signed" })])))
          assert.strictEqual(written.status, 201)
          const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/export?correlation_id=rr-signed&include_detached_signature=true"))
          assert.strictEqual(r.status, 200)
          return yield* Effect.promise(() => r.text())
        }))
      assert.isTrue(Fs.existsSync(keyFile), "the key was kept in its file")
      assert.strictEqual(Fs.statSync(keyFile).mode & 0o777, 0o600)
      const doc = JSON.parse(exported) as { export_metadata: Record<string, string>; detached_signature: string }
      assert.strictEqual(doc.export_metadata["signature_algorithm"], "ES256")
      assert.strictEqual(doc.export_metadata["signature"], "detached")
      assert.isString(doc.detached_signature)

      // A new process with the same key file publishes the same key.
      const pem = yield* withService(
        keyFile,
        (h) => Effect.promise(() => h.fetch("/api/v1/audit/export/signing-key.pem", { token: null }).then((r) => r.text()))
      )
      assert.match(pem, /^-----BEGIN PUBLIC KEY-----/)
      Fs.writeFileSync(Path.join(dir, "export-key.pem"), pem)

      Fs.writeFileSync(Path.join(dir, "export.json"), exported)
      assert.strictEqual(verify(dir), "Verified OK")
      Fs.writeFileSync(Path.join(dir, "export.json"), exported.replace("rr-signed", "rr-signeD"))
      assert.match(verify(dir), /Verification failure/)
      Fs.rmSync(dir, { recursive: true, force: true })
    }), { timeout: 120_000 })
})
