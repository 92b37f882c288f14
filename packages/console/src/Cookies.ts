/**
 * The console's cookies: sealed with jose (JWE, `dir` + A256GCM, a key derived from `cookie-secret` with HKDF), so
 * the browser holds only ciphertext it can neither read nor alter; `HttpOnly`, `SameSite=Lax`, `Secure` when the
 * console is served over https. A value longer than one cookie may be is split over numbered cookies.
 */
import { EncryptJWT, jwtDecrypt, type JWTPayload } from "jose"
import { hkdfSync } from "node:crypto"

export const sessionCookie = "kubemend_session"
export const loginCookie = "kubemend_login"

/** Browsers keep at least 4096 bytes per cookie, name and attributes included. */
const chunkSize = 3800

export interface Sealer {
  readonly seal: (payload: JWTPayload, maxAgeSeconds: number) => Promise<string>
  /** The payload, or undefined when the value is missing, altered, sealed with another key or expired. */
  readonly open: (value: string | undefined) => Promise<JWTPayload | undefined>
}

export const makeSealer = (secret: string): Sealer => {
  const key = new Uint8Array(hkdfSync("sha256", secret, new Uint8Array(0), "kubemend-console-cookie", 32))
  return {
    seal: (payload, maxAgeSeconds) =>
      new EncryptJWT(payload).setProtectedHeader({ alg: "dir", enc: "A256GCM" }).setIssuedAt()
        .setExpirationTime(`${maxAgeSeconds}s`).encrypt(key),
    open: async (value) => {
      if (value === undefined || value === "") return undefined
      try {
        const { payload } = await jwtDecrypt(value, key, { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] })
        return payload
      } catch {
        return undefined
      }
    }
  }
}

export interface CookieOptions {
  readonly secure: boolean
  readonly path?: string
}

const attributes = (options: CookieOptions, maxAge: number) =>
  `; Path=${options.path ?? "/"}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${options.secure ? "; Secure" : ""}`

/** Parses a `Cookie` header (first value of a name wins, as browsers send the most specific first). */
export const parseCookies = (header: string | undefined): Map<string, string> => {
  const out = new Map<string, string>()
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=")
    if (i < 0) continue
    const name = part.slice(0, i).trim()
    if (!out.has(name)) out.set(name, part.slice(i + 1).trim())
  }
  return out
}

/** The value of `name`, joined from `name.0`, `name.1`, … when it was split. */
export const readCookie = (cookies: Map<string, string>, name: string): string | undefined => {
  const whole = cookies.get(name)
  if (whole !== undefined) return whole
  let joined = ""
  for (let i = 0; cookies.has(`${name}.${i}`); i++) joined += cookies.get(`${name}.${i}`)
  return joined === "" ? undefined : joined
}

/** `Set-Cookie` values writing `value` under `name` (split when long) and clearing the parts the browser holds. */
export const writeCookie = (
  cookies: Map<string, string>,
  name: string,
  value: string,
  maxAge: number,
  options: CookieOptions
): Array<string> => {
  const parts = value.length <= chunkSize ?
    [value] :
    Array.from({ length: Math.ceil(value.length / chunkSize) }, (_, i) => value.slice(i * chunkSize, (i + 1) * chunkSize))
  const names = parts.length === 1 ? [name] : parts.map((_, i) => `${name}.${i}`)
  const written = names.map((n, i) => `${n}=${parts[i]}${attributes(options, maxAge)}`)
  const stale = [...cookies.keys()].filter((n) => (n === name || n.startsWith(`${name}.`)) && !names.includes(n))
  return [...written, ...stale.map((n) => `${n}=${attributes(options, 0)}`)]
}

/** `Set-Cookie` values removing every part of `name` the browser holds. */
export const clearCookie = (cookies: Map<string, string>, name: string, options: CookieOptions): Array<string> =>
  [...cookies.keys()].filter((n) => n === name || n.startsWith(`${name}.`)).map((n) => `${n}=${attributes(options, 0)}`)
