// The console's single-page app: built into packages/console/dist/web, which the console server serves.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Vite would inline small assets as data: URLs; the CSP allows them for images and fonts only, so keep files.
  build: { outDir: "../dist/web", emptyOutDir: true, assetsInlineLimit: 0, chunkSizeWarningLimit: 1500 },
  oxc: { jsx: { runtime: "automatic" } },
  logLevel: "warn"
})
