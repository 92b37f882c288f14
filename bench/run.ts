/**
 * `npm run bench`: runs every benchmark in its own process, one after another, so they do not compete for the two
 * cores. Each prints its own table with the baseline measured beside it in the same run.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const dir = Path.dirname(new URL(import.meta.url).pathname)
const only = process.argv.slice(2)
const benches = Fs.readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()

let failed = 0
for (const file of benches) {
  process.stdout.write(`\n=== ${file} ===\n`)
  const result = spawnSync(process.execPath, ["--import", "tsx", Path.join(dir, file)], { stdio: "inherit" })
  if (result.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
