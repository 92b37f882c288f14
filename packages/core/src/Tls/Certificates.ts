/**
 * The platform's X.509 material, built with @peculiar/x509 (ECDSA P-256, SHA-256): a CA, serving certificates it
 * signs for a service's DNS names and addresses, and the validity window of a PEM certificate (rotation reads it).
 * The operator's own CA, the local platform's devkit CA and the devkit API server's throwaway CA all come from here.
 */
// tsyringe, under @peculiar/x509, needs the Reflect metadata API before it loads.
import "reflect-metadata"
import * as x509 from "@peculiar/x509"
import { createPrivateKey, KeyObject, randomBytes, X509Certificate } from "node:crypto"
import { isIP } from "node:net"

const ecdsa = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const
const newKeys = () => crypto.subtle.generateKey(ecdsa, true, ["sign", "verify"])
const keyPem = (key: CryptoKey) => KeyObject.from(key).export({ type: "pkcs8", format: "pem" }) as string

export interface Validity {
  readonly notBefore: Date
  readonly notAfter: Date
}

/** PEM certificate and PKCS#8 private key. */
export interface KeyPair {
  readonly certPem: string
  readonly keyPem: string
}

/** `days` from `now`, backdated a minute so a peer whose clock is slightly behind accepts it at once. */
export const validFor = (now: Date, days: number): Validity => ({
  notBefore: new Date(now.getTime() - 60_000),
  notAfter: new Date(now.getTime() + days * 24 * 3600_000)
})

/** A self-signed CA allowed to sign serving certificates only (path length 0). */
export const makeAuthority = async (commonName: string, validity: Validity): Promise<KeyPair> => {
  const keys = await newKeys()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(16).toString("hex"),
    name: `CN=${commonName}`,
    ...validity,
    keys,
    signingAlgorithm: ecdsa,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey)
    ]
  })
  return { certPem: cert.toString("pem") + "\n", keyPem: keyPem(keys.privateKey) }
}

/** A serving certificate for `hosts` (DNS names and IP addresses) signed by `authority`. */
export const issueServing = async (
  authority: KeyPair,
  commonName: string,
  hosts: ReadonlyArray<string>,
  validity: Validity
): Promise<KeyPair> => {
  const caCert = new x509.X509Certificate(authority.certPem)
  const der = createPrivateKey(authority.keyPem).export({ type: "pkcs8", format: "der" })
  const signingKey = await crypto.subtle.importKey("pkcs8", der, ecdsa, false, ["sign"])
  const keys = await newKeys()
  const cert = await x509.X509CertificateGenerator.create({
    // 16 random bytes; the library encodes them as a minimal positive DER INTEGER whatever the first bytes are.
    serialNumber: randomBytes(16).toString("hex"),
    subject: `CN=${commonName}`,
    issuer: caCert.subject,
    ...validity,
    publicKey: keys.publicKey,
    signingKey,
    signingAlgorithm: ecdsa,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        [...new Set(hosts)].map((h): x509.JsonGeneralName => ({ type: isIP(h) === 0 ? "dns" : "ip", value: h }))
      ),
      await x509.AuthorityKeyIdentifierExtension.create(caCert)
    ]
  })
  return { certPem: cert.toString("pem") + "\n", keyPem: keyPem(keys.privateKey) }
}

/** The validity window of a PEM certificate (the first one in a bundle). */
export const validityOf = (certPem: string): Validity => {
  const cert = new X509Certificate(certPem)
  return { notBefore: new Date(cert.validFrom), notAfter: new Date(cert.validTo) }
}

/**
 * Whether a certificate is due for renewal at `now`: past two thirds of its lifetime (as cert-manager renews by
 * default), so a failed renewal still leaves a third of the lifetime to retry in.
 */
export const renewalDue = (validity: Validity, now: Date): boolean => {
  const start = validity.notBefore.getTime()
  return now.getTime() >= start + ((validity.notAfter.getTime() - start) * 2) / 3
}

/** Whether `certPem` was signed by `authorityPem` and names every one of `hosts`. */
export const servesFor = (certPem: string, authorityPem: string, hosts: ReadonlyArray<string>): boolean => {
  const cert = new X509Certificate(certPem)
  if (!cert.verify(new X509Certificate(authorityPem).publicKey)) return false
  return hosts.every((h) => (isIP(h) === 0 ? cert.checkHost(h) !== undefined : cert.checkIP(h) !== undefined))
}
