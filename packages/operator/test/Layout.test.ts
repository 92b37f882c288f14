/**
 * The operator's layout by controller conventions: a controller's folder imports the kernel (`runtime/`,
 * `remediation/`, `clients/`) and its own files, never another controller's folder; the kernel imports no
 * controller; and nothing in `src/` imports test code.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const src = Path.resolve(import.meta.dirname, "../src")
const kernel = new Set(["runtime", "remediation", "clients"])
const controllers = new Set([
  "platform",
  "signalprocessing",
  "analysis",
  "orchestrator",
  "execution",
  "effectiveness",
  "notification",
  "catalog",
  "policy"
])

const walk = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(Path.join(dir, e.name)) : e.name.endsWith(".ts") ? [Path.join(dir, e.name)] : []
  )

/** Every module specifier of `import`/`export ... from` and dynamic `import()` in a file. */
const specifiers = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:^|\s)(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)|^import\s+"([^"]+)"/gm)]
    .map((m) => m[1] ?? m[2] ?? m[3] ?? "")

/** The top folder of `src/` a file lives in ("" for the service root). */
const areaOf = (file: string) => {
  const rel = Path.relative(src, file).split(Path.sep)
  return rel.length > 1 ? rel[0]! : ""
}

/** Each import of `src/` resolved: its importing file, target file (outside src: the specifier) and areas. */
const imports = walk(src).flatMap((file) =>
  specifiers(Fs.readFileSync(file, "utf8")).map((spec) => {
    const local = spec.startsWith(".")
    const target = local ? Path.resolve(Path.dirname(file), spec) : spec
    const inSrc = local && !Path.relative(src, target).startsWith("..")
    return { file: Path.relative(src, file), spec, target, from: areaOf(file), to: inSrc ? areaOf(target) : undefined }
  })
)

describe("operator layout", () => {
  it("finds the imports it checks", () => {
    expect(imports.filter((i) => i.to !== undefined).length).toBeGreaterThan(100)
    for (const area of [...kernel, ...controllers]) expect(Fs.existsSync(Path.join(src, area)), area).toBe(true)
  })

  it("no controller folder imports another controller's folder", () => {
    const wrong = imports.filter((i) => controllers.has(i.from) && i.to !== undefined && controllers.has(i.to) && i.to !== i.from)
    expect(wrong.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("the kernel (runtime, remediation, clients) imports no controller", () => {
    const wrong = imports.filter((i) => kernel.has(i.from) && i.to !== undefined && controllers.has(i.to))
    expect(wrong.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("src imports no test code and no dev-only package", () => {
    const wrong = imports.filter((i) =>
      (i.spec.startsWith(".") && !i.target.startsWith(src + Path.sep)) ||
      /\/test\/|^@kubemend\/(devkit|local)(\/|$)|^@kubemend\/[a-z]+\/test\//.test(i.spec)
    )
    expect(wrong.map((i) => `${i.file} -> ${i.spec}`)).toEqual([])
  })

  it("every folder of src is the kernel or a controller", () => {
    const folders = Fs.readdirSync(src, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)
    expect(folders.filter((f) => !kernel.has(f) && !controllers.has(f))).toEqual([])
  })
})
