/** A throwaway CA and a server certificate signed by it (ECDSA P-256, SHA-256), built with @peculiar/x509. */
// tsyringe, under @peculiar/x509, needs the Reflect metadata API before it loads.
import "reflect-metadata"
import * as x509 from "@peculiar/x509"
import { KeyObject, randomBytes } from "node:crypto"
import { isIP } from "node:net"

const ecdsa = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const
const newKeys = () => crypto.subtle.generateKey(ecdsa, true, ["sign", "verify"])

interface CertInput {
  readonly subject: string
  readonly issuer: string
  readonly publicKey: CryptoKey
  readonly signer: CryptoKey
  readonly extensions: ReadonlyArray<x509.Extension>
}

const certificate = async (c: CertInput): Promise<string> => {
  const cert = await x509.X509CertificateGenerator.create({
    // 16 random bytes; the library encodes them as a minimal positive DER INTEGER whatever the first bytes are.
    serialNumber: randomBytes(16).toString("hex"),
    subject: `CN=${c.subject}`,
    issuer: `CN=${c.issuer}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 365 * 24 * 3600_000),
    publicKey: c.publicKey,
    signingKey: c.signer,
    signingAlgorithm: ecdsa,
    extensions: [...c.extensions]
  })
  return cert.toString("pem") + "\n"
}

export interface TlsMaterial {
  readonly caPem: string
  readonly certPem: string
  readonly keyPem: string
}

/** A CA plus a server certificate for `hosts` (DNS names and IP addresses). */
export const generateTls = async (hosts: ReadonlyArray<string>): Promise<TlsMaterial> => {
  const ca = await newKeys()
  const server = await newKeys()
  const caPem = await certificate({
    subject: "devkube-ca",
    issuer: "devkube-ca",
    publicKey: ca.publicKey,
    signer: ca.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true
      )
    ]
  })
  const certPem = await certificate({
    subject: "devkube-apiserver",
    issuer: "devkube-ca",
    publicKey: server.publicKey,
    signer: ca.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        [...new Set(hosts)].map((h): x509.JsonGeneralName => ({ type: isIP(h) === 0 ? "dns" : "ip", value: h }))
      )
    ]
  })
  const keyPem = KeyObject.from(server.privateKey).export({ type: "pkcs8", format: "pem" }) as string
  return { caPem, certPem, keyPem }
}
