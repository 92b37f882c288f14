/** A throwaway CA and a server certificate signed by it (core `Tls/Certificates`), for one test or dev server. */
import { issueServing, makeAuthority, validFor } from "@kubemend/core/Tls/Certificates"

export interface TlsMaterial {
  readonly caPem: string
  readonly certPem: string
  readonly keyPem: string
}

/** A CA plus a server certificate for `hosts` (DNS names and IP addresses), both valid for a year. */
export const generateTls = async (hosts: ReadonlyArray<string>): Promise<TlsMaterial> => {
  const validity = validFor(new Date(), 365)
  const ca = await makeAuthority("devkube-ca", validity)
  const server = await issueServing(ca, "devkube-apiserver", hosts, validity)
  return { caPem: ca.certPem, ...server }
}
