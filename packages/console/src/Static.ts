/**
 * The built single-page app, read into memory at start (it is a few files): `index.html` for every path that is not
 * a file (the app routes in the browser), hashed assets cached for a year, everything else revalidated.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

export interface StaticFile {
  readonly body: Uint8Array
  readonly contentType: string
  readonly cacheControl: string
}

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".map": "application/json"
}

const walk = (dir: string, base = dir): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = Path.join(dir, e.name)
    return e.isDirectory() ? walk(full, base) : [Path.relative(base, full).split(Path.sep).join("/")]
  })

export interface App {
  /** The file at this URL path, if the app has one. */
  readonly file: (path: string) => StaticFile | undefined
  /** `index.html`; undefined when the app was not built. */
  readonly index: StaticFile | undefined
}

export const loadApp = (dir: string) =>
  Effect.sync((): App => {
    const files = new Map<string, StaticFile>()
    if (Fs.existsSync(dir)) {
      for (const rel of walk(dir)) {
        files.set(`/${rel}`, {
          body: Fs.readFileSync(Path.join(dir, rel)),
          contentType: types[Path.extname(rel)] ?? "application/octet-stream",
          cacheControl: rel.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache"
        })
      }
    }
    return { file: (path) => (path === "/index.html" ? undefined : files.get(path)), index: files.get("/index.html") }
  })
