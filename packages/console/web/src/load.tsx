/** Loading a view's data: a spinner first, the gateway's words on failure (never a blank screen), optional polling. */
import { Alert, Spinner } from "@patternfly/react-core"
import { type ReactNode, useCallback, useEffect, useState } from "react"
import { ApiError } from "./api.ts"

export interface Loaded<T> {
  readonly data: T | undefined
  readonly error: ApiError | Error | undefined
  readonly reload: () => void
}

// A function declaration: in a .tsx file an arrow's `<T>` reads as JSX.
export function useLoad<T>(load: () => Promise<T>, deps: ReadonlyArray<unknown>, pollMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>()
  const [error, setError] = useState<Error | undefined>()
  const [tick, setTick] = useState(0)
  const reload = useCallback(() => setTick((t) => t + 1), [])
  useEffect(() => {
    let live = true
    load().then(
      (d) => {
        if (live) {
          setData(d)
          setError(undefined)
        }
      },
      (e: unknown) => {
        if (live) setError(e instanceof Error ? e : new Error(String(e)))
      }
    )
    const timer = pollMs === undefined ? undefined : setTimeout(reload, pollMs)
    return () => {
      live = false
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [...deps, tick])
  return { data, error, reload }
}

/** The data, or a spinner while it loads, or what went wrong (a refused permission says so). */
export function Show<T>({ loaded, what, children }: { loaded: Loaded<T>; what: string; children: (data: T) => ReactNode }) {
  if (loaded.error !== undefined && loaded.data === undefined) {
    const denied = loaded.error instanceof ApiError && loaded.error.status === 403
    return (
      <Alert variant={denied ? "warning" : "danger"} isInline title={denied ? `No permission to see ${what}` : `Could not load ${what}`}>
        {loaded.error.message}
      </Alert>
    )
  }
  if (loaded.data === undefined) return <Spinner aria-label={`Loading ${what}`} />
  return <>{children(loaded.data)}</>
}

/**
 * A table that scrolls sideways on a narrow screen: focusable and named, so a keyboard user can scroll it too
 * (WCAG 2.1.1; axe's scrollable-region-focusable).
 */
export const Scroll = ({ label, children }: { label: string; children: ReactNode }) => (
  <div className="km-scroll" role="region" aria-label={label} tabIndex={0}>{children}</div>
)

/** "5m", "2h", "3d" since an RFC 3339 time. */
export const age = (since: string | undefined, now = Date.now()) => {
  const at = since === undefined ? NaN : Date.parse(since)
  if (Number.isNaN(at)) return ""
  const s = Math.max(0, Math.floor((now - at) / 1000))
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 86400 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`
}
