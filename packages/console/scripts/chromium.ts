/**
 * Debian's Chromium (`/usr/bin/chromium`) driven by playwright-core, whose own browser download cannot work here:
 * the console's browser journey, its screenshots and its benchmark all launch it and sign in the same way.
 */
import { type BrowserContext, chromium, type Page } from "playwright-core"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export const executablePath = "/usr/bin/chromium"

export const chromiumPresent = () => Fs.existsSync(executablePath)

/** A fresh profile (no cache, no cookies) at `viewport`. */
export const launch = (viewport = { width: 1280, height: 800 }): Promise<BrowserContext> =>
  chromium.launchPersistentContext(Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-chromium-")), {
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ],
    viewport
  })

/** Opens `path` of the console signed out, picks `persona` on the dev issuer's page, and answers the console page. */
export const signIn = async (browser: BrowserContext, consoleUrl: string, persona: string, path: string): Promise<Page> => {
  const page = browser.pages()[0] ?? await browser.newPage()
  // Off the console first: a page left open would answer the cleared cookie by navigating to sign in itself.
  await page.goto("about:blank")
  await browser.clearCookies()
  await page.goto(`${consoleUrl}${path}`)
  await page.getByRole("button", { name: persona, exact: true }).click()
  await page.waitForURL(`${consoleUrl}${path}`)
  return page
}
