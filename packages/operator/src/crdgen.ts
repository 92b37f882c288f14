/**
 * Writes the generated CRDs to `deploy/crds/` (or checks them with `--check`):
 *   node --import tsx packages/operator/src/crdgen.ts [--check] [--group kubemend.io]
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { crdFileName, crdYaml, renderCrds } from "./Crds.ts"

const args = process.argv.slice(2)
const group = args.includes("--group") ? args[args.indexOf("--group") + 1] : undefined
const dir = Path.resolve(import.meta.dirname, "../../../deploy/crds")
Fs.mkdirSync(dir, { recursive: true })
let stale = 0
for (const crd of renderCrds(group)) {
  const file = Path.join(dir, crdFileName(crd))
  const text = crdYaml(crd)
  if (args.includes("--check")) {
    const current = Fs.existsSync(file) ? Fs.readFileSync(file, "utf8") : ""
    if (current !== text) {
      stale++
      process.stderr.write(`stale: ${file}\n`)
    }
  } else {
    Fs.writeFileSync(file, text)
    process.stdout.write(`wrote ${file}\n`)
  }
}
process.exitCode = stale === 0 ? 0 : 1
