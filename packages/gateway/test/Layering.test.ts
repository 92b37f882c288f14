/**
 * The gateway's layering, read from the imports of `src` (type-only ones too: they tie files together as much):
 * no two files import each other, directly or round a circle; the MCP layer (tools, call pipeline, sessions), which
 * the A2A agent reuses, knows nothing of the HTTP edge; the agent client knows nothing of the MCP layer, the tools,
 * the A2A agent or the edge that use it; the MCP tools know nothing of the A2A agent.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import path from "node:path"

const src = path.resolve(import.meta.dirname, "../src")

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
  )

/** `import … from`, `export … from`, `import "…"` and `import("…")` of a relative path. */
const specifiers = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g

/** Each file (relative to `src`) with the files of `src` it imports. */
const graph: ReadonlyMap<string, ReadonlyArray<string>> = new Map(
  filesUnder(src).map((file) => [
    path.relative(src, file),
    [...readFileSync(file, "utf8").matchAll(specifiers)].map((m) => path.relative(src, path.resolve(path.dirname(file), m[1]!)))
  ])
)

/** Every import circle, each as the path that closes it (depth-first; a file is left once all it reaches is seen). */
const circles = (): ReadonlyArray<ReadonlyArray<string>> => {
  const found: Array<ReadonlyArray<string>> = []
  const done = new Set<string>()
  const onPath: Array<string> = []
  const visit = (file: string) => {
    if (done.has(file)) return
    const at = onPath.indexOf(file)
    if (at >= 0) {
      found.push([...onPath.slice(at), file])
      return
    }
    onPath.push(file)
    for (const next of graph.get(file) ?? []) visit(next)
    onPath.pop()
    done.add(file)
  }
  for (const file of graph.keys()) visit(file)
  return found
}

/** The imports of files under `from` that reach files under any of `to` (`from -> to`). */
const importsAcross = (from: string, to: ReadonlyArray<string>) =>
  [...graph].flatMap(([file, imports]) =>
    file === from || file.startsWith(`${from}/`)
      ? imports.filter((i) => to.some((t) => i === t || i.startsWith(`${t}/`))).map((i) => `${file} -> ${i}`)
      : []
  )

describe("gateway layering", () => {
  it("reads the imports of src", () => {
    assert.isAbove(graph.size, 50)
    assert.isTrue(graph.get("Mcp/Call.ts")?.includes("Mcp/Tool.ts"))
  })

  it("has no import circle between files", () => {
    assert.deepStrictEqual(circles().map((c) => c.join(" -> ")), [])
  })

  it("keeps the MCP layer off the HTTP edge", () => {
    assert.deepStrictEqual(importsAcross("Mcp", ["Edge"]), [])
  })

  it("keeps the agent client off the MCP layer, the tools, the A2A agent and the edge", () => {
    assert.isTrue(graph.has("AgentSessionsClient.ts"))
    assert.deepStrictEqual(importsAcross("AgentSessionsClient.ts", ["Mcp", "Tools", "A2a", "Edge"]), [])
  })

  it("keeps the MCP tools off the A2A agent", () => {
    assert.deepStrictEqual(importsAcross("Tools", ["A2a"]), [])
  })
})
