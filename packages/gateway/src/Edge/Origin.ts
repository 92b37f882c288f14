/**
 * Browser-origin check against DNS rebinding: a page on a hostile domain that resolves to the gateway sends its own
 * `Origin`, and the `Host` header would carry the same hostile name, so only an explicit allow-list is trusted.
 * Requests without `Origin` (command-line and server-side clients) pass.
 */
import { Effect } from "effect"
import { Forbidden } from "@kubemend/core/Errors"

const normalize = (origin: string) => origin.trim().replace(/\/+$/, "").toLowerCase()

export const originAllowed = (origin: string | undefined, allowed: ReadonlyArray<string>): boolean => {
  if (origin === undefined) return true
  const o = normalize(origin)
  return allowed.some((a) => a === "*" || normalize(a) === o)
}

export const checkOrigin = (origin: string | undefined, allowed: ReadonlyArray<string>): Effect.Effect<void, Forbidden> =>
  originAllowed(origin, allowed)
    ? Effect.void
    : Effect.fail(new Forbidden({ detail: `origin ${JSON.stringify(origin)} is not allowed` }))
