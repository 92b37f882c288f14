/**
 * Reads the server's discovery documents into REST mappings: `/api/v1` for the core group, `/apis` for the groups and
 * their preferred versions, `/apis/<group>/<version>` for each group version. A group version that fails (aggregated
 * APIs such as metrics often do) is skipped; only a failure of the core or group list fails discovery.
 */
import { Effect } from "effect"
import type { ResourceMapping } from "./RestMapper.ts"
import type { HttpFailure } from "./Retry.ts"

interface ApiResource {
  readonly name?: unknown
  readonly kind?: unknown
  readonly namespaced?: unknown
}

interface ApiGroup {
  readonly name?: unknown
  readonly versions?: ReadonlyArray<{ readonly version?: unknown }>
  readonly preferredVersion?: { readonly version?: unknown }
}

const resourcesOf = (doc: unknown): ReadonlyArray<ApiResource> => {
  const list = (doc as { resources?: unknown } | null)?.resources
  return Array.isArray(list) ? (list as ReadonlyArray<ApiResource>) : []
}

const toMappings = (group: string, version: string, preferred: boolean, doc: unknown): Array<ResourceMapping> =>
  resourcesOf(doc).flatMap((r) =>
    typeof r.name === "string" && typeof r.kind === "string" && !r.name.includes("/")
      ? [{ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced === true, preferred }]
      : []
  )

export const discover = (
  get: (path: string) => Effect.Effect<unknown, HttpFailure>
): Effect.Effect<ReadonlyArray<ResourceMapping>, HttpFailure> =>
  Effect.gen(function* () {
    const core = yield* get("/api/v1")
    const groupList = yield* get("/apis")
    const groups = ((groupList as { groups?: unknown } | null)?.groups ?? []) as ReadonlyArray<ApiGroup>
    const versions = groups.flatMap((g) =>
      typeof g.name === "string"
        ? (g.versions ?? []).flatMap((v) =>
          typeof v.version === "string"
            ? [{
              group: g.name as string,
              version: v.version,
              preferred: (g.preferredVersion?.version ?? g.versions?.[0]?.version) === v.version
            }]
            : []
        )
        : []
    )
    const perVersion = yield* Effect.forEach(
      versions,
      (gv) =>
        get(`/apis/${gv.group}/${gv.version}`).pipe(
          Effect.map((doc) => toMappings(gv.group, gv.version, gv.preferred, doc)),
          Effect.catchAll((e) => Effect.logDebug(`discovery of ${gv.group}/${gv.version} failed`, e.message).pipe(Effect.as([])))
        ),
      { concurrency: 8 }
    )
    return [...toMappings("", "v1", true, core), ...perVersion.flat()]
  })
