/**
 * The pure steps of bearer token checking: header parsing, the cheap structural checks made before any key is
 * touched, claim mapping, and turning jose's errors into audit reasons.
 */
import { Either } from "effect"
import { decodeJwt, decodeProtectedHeader, errors } from "jose"
import type { AuthFailureReason } from "../Errors.ts"
import { Unauthenticated } from "../Errors.ts"
import type { ClaimMappings } from "./Config.ts"

export const allowedAlgorithms = ["RS256", "ES256"] as const

const fail = (reason: AuthFailureReason, detail: string) => Either.left(new Unauthenticated({ reason, detail }))

const controlChars = /[\u0000-\u001f\u007f-\u009f]/
export const hasControlChars = (s: string) => controlChars.test(s)

const jwsCompact = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** The raw token from `Authorization: Bearer <token>`. */
export const bearerToken = (header: string | undefined, maxBytes: number): Either.Either<string, Unauthenticated> => {
  if (header === undefined || header.trim() === "") return fail("missing_header", "no Authorization header")
  if (hasControlChars(header)) return fail("control_chars", "Authorization header contains control characters")
  const match = /^\s*Bearer +(.*?)\s*$/i.exec(header)
  if (match === null) return fail("non_bearer", "Authorization scheme is not Bearer")
  const token = match[1]!
  if (token === "") return fail("malformed_token", "empty bearer token")
  if (Buffer.byteLength(token, "utf8") > maxBytes) return fail("token_too_large", `token exceeds ${maxBytes} bytes`)
  return Either.right(token)
}

export interface Unverified {
  readonly kid: string | undefined
  readonly iss: string
  readonly aud: ReadonlyArray<string>
}

/**
 * Header and claims read WITHOUT verification, only to choose the provider and key. Rejects anything outside
 * RS256/ES256 (`none`, HS256 key confusion) and tokens carrying their own key or key URL, which are never trusted.
 */
export const inspect = (token: string): Either.Either<Unverified, Unauthenticated> => {
  if (!jwsCompact.test(token)) return fail("malformed_token", "not a compact JWS")
  let header: Record<string, unknown>
  let claims: Record<string, unknown>
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>
    claims = decodeJwt(token) as Record<string, unknown>
  } catch {
    return fail("malformed_token", "token header or claims are not valid base64url JSON")
  }
  if (typeof header.alg !== "string" || !(allowedAlgorithms as ReadonlyArray<string>).includes(header.alg)) {
    return fail("unsupported_algorithm", `algorithm ${String(header.alg)} is not accepted`)
  }
  for (const h of ["jwk", "jku", "x5u", "x5c"]) {
    if (h in header) return fail("invalid_signature", `token header "${h}" is never trusted`)
  }
  if (header.kid !== undefined && typeof header.kid !== "string") return fail("malformed_token", "kid is not a string")
  if (typeof claims.iss !== "string" || claims.iss === "") return fail("malformed_token", "iss claim missing")
  const aud = typeof claims.aud === "string" ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a) => typeof a === "string") : []
  return Either.right({ kid: header.kid as string | undefined, iss: claims.iss, aud })
}

/** jose's verification errors as audit reasons. */
export const reasonOf = (e: unknown): Unauthenticated => {
  if (e instanceof errors.JWTExpired) return new Unauthenticated({ reason: "token_expired", detail: "token has expired" })
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === "exp" && e.reason === "missing") return new Unauthenticated({ reason: "missing_expiry", detail: "exp claim is required" })
    if (e.claim === "aud") return new Unauthenticated({ reason: "invalid_audience", detail: "aud does not match a configured audience" })
    if ((e.claim === "nbf" || e.claim === "iat") && e.reason === "check_failed") {
      return new Unauthenticated({ reason: "not_yet_valid", detail: `${e.claim} is in the future` })
    }
    return new Unauthenticated({ reason: "malformed_token", detail: e.message })
  }
  if (e instanceof errors.JOSEAlgNotAllowed || e instanceof errors.JOSENotSupported) {
    return new Unauthenticated({ reason: "unsupported_algorithm", detail: "algorithm not accepted" })
  }
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid) {
    return new Unauthenticated({ reason: "malformed_token", detail: e.message })
  }
  return new Unauthenticated({ reason: "invalid_signature", detail: "signature could not be verified with the issuer's keys" })
}

/** A claim by dot path; own properties only, so `__proto__.x` reads nothing. */
export const claimAt = (claims: Record<string, unknown>, path: string): unknown =>
  path.split(".").reduce<unknown>(
    (v, k) => (typeof v === "object" && v !== null && Object.hasOwn(v, k) ? (v as Record<string, unknown>)[k] : undefined),
    claims
  )

const nonEmpty = (u: unknown): string | undefined => (typeof u === "string" && u !== "" ? u : undefined)

/** User name and groups per the provider's claim mappings, with the documented fallbacks. */
export const identity = (
  claims: Record<string, unknown>,
  mappings: ClaimMappings | undefined
): Either.Either<{ readonly user: string; readonly groups: ReadonlyArray<string> }, Unauthenticated> => {
  const user = (mappings?.username === undefined ? undefined : nonEmpty(claimAt(claims, mappings.username))) ??
    nonEmpty(claims.preferred_username) ?? nonEmpty(claims.sub)
  if (user === undefined) return fail("malformed_token", "no user name claim")
  const raw = mappings?.groups === undefined ? claims.groups : claimAt(claims, mappings.groups)
  if (raw !== undefined && (!Array.isArray(raw) || !raw.every((g) => typeof g === "string"))) {
    return fail("malformed_token", "groups claim is not a list of strings")
  }
  const groups = (raw ?? []) as ReadonlyArray<string>
  if (hasControlChars(user) || groups.some(hasControlChars)) return fail("control_chars", "identity claims contain control characters")
  return Either.right({ user, groups })
}
