import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

const packages = ["core", "devkit", "storage", "agent", "gateway", "operator", "signals", "console", "local"]
/** Lines covered, per package: the shared core and the services holding user data are held higher. */
const linesFloor: Record<string, number> = { core: 85, gateway: 85, storage: 85 }

export default defineConfig({
  test: {
    // Vitest's default (one worker fewer than the cores) runs the files one at a time on two cores, yet most of a
    // file's time is spent waiting on the processes it starts (storage, the local platform, PostgreSQL).
    maxWorkers: Math.max(2, availableParallelism()),
    // One project per package so `vitest run --project storage` narrows a run.
    projects: packages.map((name) => ({
      test: {
        name,
        root: `packages/${name}`,
        include: ["test/**/*.test.ts"],
        testTimeout: 30_000,
        hookTimeout: 60_000
      }
    })).concat([{
      // Scripted investigations of whole incidents against the real agent (packages/agent/scenarios).
      test: {
        name: "scenarios",
        root: "packages/agent",
        include: ["scenarios/**/*.test.ts"],
        testTimeout: 60_000,
        hookTimeout: 60_000
      }
    }, {
      // Journeys across the real services on the local platform (started once per file), with the official MCP and
      // A2A SDK clients (packages/local/journeys).
      test: {
        name: "journeys",
        root: "packages/local",
        include: ["journeys/**/*.test.ts"],
        testTimeout: 150_000,
        hookTimeout: 240_000
      }
    }]),
    // Off unless asked for (`npm test` passes --coverage), so one file run on its own is not held to the floors.
    // Only code run inside the test processes counts: services the journeys start as processes of their own do not.
    coverage: {
      provider: "v8",
      include: packages.map((name) => `packages/${name}/src/**/*.ts`),
      reporter: ["text-summary", "html", "json-summary"],
      reportsDirectory: "coverage",
      // No floor for the local platform: it runs as a process of its own (Smoke, CtrlC, the fault drill, the journeys),
      // where nothing is counted, so its figure says nothing about how well it is tested.
      thresholds: Object.fromEntries(
        packages.filter((name) => name !== "local").map((name) => [`packages/${name}/src/**/*.ts`, { lines: linesFloor[name] ?? 75 }])
      )
    }
  }
})
