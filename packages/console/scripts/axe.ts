/**
 * An axe-core scan of the page as it stands, against WCAG 2.1 A and AA. The engine is evaluated through the
 * DevTools protocol, which the console's CSP (`script-src 'self'`) does not govern, so the page keeps its real policy.
 */
import type { AxeResults, RunOptions } from "axe-core"
import type { Page } from "playwright-core"
import * as Fs from "node:fs"
import { createRequire } from "node:module"

const source = Fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

type Axe = { readonly run: (context: Document, options: RunOptions) => Promise<AxeResults> }

export interface Violation {
  readonly id: string
  readonly impact: string
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/** The serious and critical violations on the page (what the console must never have). */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(source)
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: Axe }).axe
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact ?? "", help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }))
  })
}

/** How far the page is wider than the viewport (0 when nothing overflows horizontally). */
export const horizontalOverflow = (page: Page): Promise<number> =>
  page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth))
