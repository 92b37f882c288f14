/**
 * The local platform's TLS: a devkit CA kept in `.local/tls/` (made on the first start, reused after, so a client
 * told to trust `.local/tls/ca.crt` keeps working; replaced once two thirds of its 5 years have passed) and a
 * serving certificate per service for 127.0.0.1 and localhost, issued at every start.
 */
import { issueServing, type KeyPair, makeAuthority, renewalDue, validFor, validityOf } from "@kubemend/core/Tls/Certificates"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

export interface LocalTls {
  readonly caFile: string
  readonly caPem: string
  readonly serving: (name: string) => Effect.Effect<{ readonly certFile: string; readonly keyFile: string; readonly caFile: string }>
}

const readAuthority = (certFile: string, keyFile: string, now: Date): KeyPair | undefined => {
  if (!Fs.existsSync(certFile) || !Fs.existsSync(keyFile)) return undefined
  const pair = { certPem: Fs.readFileSync(certFile, "utf8"), keyPem: Fs.readFileSync(keyFile, "utf8") }
  return renewalDue(validityOf(pair.certPem), now) ? undefined : pair
}

export const localTls = (stateDir: string) =>
  Effect.promise(async (): Promise<LocalTls> => {
    const dir = Path.join(stateDir, "tls")
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const caFile = Path.join(dir, "ca.crt")
    const caKeyFile = Path.join(dir, "ca.key")
    const now = new Date()
    let ca = readAuthority(caFile, caKeyFile, now)
    if (ca === undefined) {
      ca = await makeAuthority("kubemend-local-ca", validFor(now, 5 * 365))
      Fs.writeFileSync(caKeyFile, ca.keyPem, { mode: 0o600 })
      Fs.writeFileSync(caFile, ca.certPem)
    }
    const authority = ca
    const serving = (name: string) =>
      Effect.promise(async () => {
        const leaf = await issueServing(authority, `kubemend-${name}`, ["127.0.0.1", "localhost"], validFor(new Date(), 30))
        const certFile = Path.join(dir, `${name}.crt`)
        const keyFile = Path.join(dir, `${name}.key`)
        Fs.writeFileSync(keyFile, leaf.keyPem, { mode: 0o600 })
        Fs.writeFileSync(certFile, leaf.certPem)
        return { certFile, keyFile, caFile }
      })
    return { caFile, caPem: authority.certPem, serving }
  })
