/**
 * The web console's first load in Debian's headless Chromium on loopback: from navigation to the remediations list
 * showing its rows (access check, user, MCP session and the list call included), with the browser cache emptied
 * before each load, and warm (cached) beside it; and the initial JavaScript the app's page loads, gzipped.
 * Goals (issue 19): first load <= 1 s, initial JS <= 300 KB gzipped.
 *
 * Against a running `npm start` (STACK=.local/stack.json) or a local platform it starts itself:
 *   node --import tsx bench/console-load.ts
 *   STACK=.local/stack.json LOADS=20 node --import tsx bench/console-load.ts
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { gzipSync } from "node:zlib"
import { chromiumPresent, launch, signIn } from "../packages/console/scripts/chromium.ts"
import { type LocalPlatform, startPlatform } from "../packages/local/journeys/platform.ts"

const root = Path.resolve(import.meta.dirname, "..")
const loads = Number(process.env["LOADS"] ?? 6)
/**
 * Spacing between loads: each load opens an MCP session and calls a tool as `sre`, and the gateway allows a user 60
 * calls a minute; the pause is outside the measured time.
 */
const pauseMs = Number(process.env["PAUSE_MS"] ?? 5000)

/** The scripts and module preloads `index.html` names: what a first visit must fetch before the app runs. */
const initialJs = () => {
  const dir = Path.join(root, "packages/console/dist/web")
  const html = Fs.readFileSync(Path.join(dir, "index.html"), "utf8")
  const files = [...html.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\/?([^"]+\.js)"/g)].map((m) => m[1]!)
  const css = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="\/?([^"]+\.css)"/g)].map((m) => m[1]!)
  const size = (f: string) => {
    const body = Fs.readFileSync(Path.join(dir, f))
    return { raw: body.length, gzip: gzipSync(body).length }
  }
  const sum = (fs: ReadonlyArray<string>) => fs.map(size).reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }), { raw: 0, gzip: 0 })
  return { js: sum(files), jsFiles: files.length, css: sum(css) }
}

const stats = (ms: ReadonlyArray<number>) => {
  const s = [...ms].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!
  return `median ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, min ${s[0]!.toFixed(0)} ms, max ${s.at(-1)!.toFixed(0)} ms`
}

if (!chromiumPresent()) {
  console.log("console-load: /usr/bin/chromium is missing (apt-get install chromium); skipped")
  process.exit(0)
}

let platform: LocalPlatform | undefined
const stackFile = process.env["STACK"]
const consoleUrl = stackFile === undefined
  ? (platform = await startPlatform()).stack.console.url
  : (JSON.parse(Fs.readFileSync(stackFile, "utf8")) as { console: { url: string } }).console.url
const browser = await launch()
try {
  const page = await signIn(browser, consoleUrl, "sre", "/remediations")
  const list = page.getByRole("table", { name: "Remediations" }).getByRole("link").first()
  await list.waitFor({ timeout: 30_000 })
  const cdp = await browser.newCDPSession(page)
  const load = async (cold: boolean) => {
    if (cold) await cdp.send("Network.clearBrowserCache")
    await page.goto("about:blank")
    const started = performance.now()
    await page.goto(`${consoleUrl}/remediations`)
    await list.or(page.getByText("Could not load remediations")).waitFor({ timeout: 30_000 })
    const took = performance.now() - started
    if (!(await list.isVisible())) throw new Error(`the list did not load: ${await page.locator(".pf-v6-c-alert").first().textContent()}`)
    await new Promise((r) => setTimeout(r, pauseMs))
    return took
  }
  await load(true)
  const cold: Array<number> = []
  const warm: Array<number> = []
  for (let i = 0; i < loads; i++) cold.push(await load(true))
  for (let i = 0; i < loads; i++) warm.push(await load(false))
  const size = initialJs()
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`
  console.log(`console first load to the list shown (${loads} loads each, loopback, headless Chromium):`)
  console.log(`  cold cache: ${stats(cold)}   (goal <= 1000 ms)`)
  console.log(`  warm cache: ${stats(warm)}`)
  console.log(`initial JavaScript: ${size.jsFiles} file(s), ${kb(size.js.raw)} raw, ${kb(size.js.gzip)} gzipped   (goal <= 300 KB gzipped)`)
  console.log(`initial CSS: ${kb(size.css.raw)} raw, ${kb(size.css.gzip)} gzipped`)
} finally {
  await browser.close()
  await platform?.stop()
}
