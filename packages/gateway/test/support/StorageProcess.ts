/**
 * The real storage service as a child process (`packages/storage/src/main.ts`), authenticating callers by TokenReview
 * against the test's dev API server. The gateway reaches it over HTTP through the shared StorageApi contract, as in a
 * deployment. Its database is one of storage's test databases (`TEST_DATABASE_URL`, else a copy of the embedded
 * template), so a start costs no initdb.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { DevKube } from "@kubemend/devkit/kube/DevKube"
import { freePort } from "@kubemend/devkit/FreePort"
import { testDatabaseUrl } from "../../../storage/test/support/Postgres.ts"

const root = Path.resolve(new URL("../../../..", import.meta.url).pathname)

/** `settings` go into its config file on top of the test defaults (e.g. `{ rbac: { sarCacheTTL: "1s" } }`). */
export const startStorage = (kube: DevKube, namespace: string, settings: Record<string, unknown> = {}) =>
  Effect.acquireRelease(
    Effect.flatMap(Effect.all([freePort, freePort, freePort, Effect.orDie(testDatabaseUrl)]), ([port, healthPort, metricsPort, databaseUrl]) =>
      Effect.promise(async () => {
        const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "gateway-storage-"))
        await Fs.chmod(dir, 0o755)
        const kubeconfig = Path.join(dir, "kubeconfig")
        await Fs.writeFile(kubeconfig, kube.kubeConfig())
        const config = Path.join(dir, "storage.json")
        await Fs.writeFile(
          config,
          JSON.stringify({
            bindAddress: "127.0.0.1",
            port,
            healthPort,
            metricsPort,
            namespace,
            dataDir: dir,
            databaseUrl,
            retention: { enabled: false },
            shutdown: { drainSeconds: 1 },
            logging: { level: "warn" },
            ...settings
          })
        )
        const child = spawn(process.execPath, ["--import", "tsx", Path.join(root, "packages/storage/src/main.ts")], {
          cwd: root,
          env: { ...process.env, CONFIG_FILE: config, KUBECONFIG: kubeconfig },
          stdio: ["ignore", "ignore", "pipe"]
        })
        let stderr = ""
        child.stderr.on("data", (d) =>
          void (stderr += String(d)))
        const url = `http://127.0.0.1:${port}`
        for (let i = 0;; i++) {
          if (child.exitCode !== null) throw new Error(`storage exited: ${stderr}`)
          const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then((r) => r.ok, () => false)
          if (ready) break
          if (i > 600) throw new Error(`storage did not become ready: ${stderr}`)
          await new Promise((r) => setTimeout(r, 100))
        }
        return { url, dir, child }
      })),
    ({ child, dir }) =>
      Effect.promise(async () => {
        const exited = new Promise((r) =>
          child.once("exit", r)
        )
        child.kill("SIGTERM")
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
        if (child.exitCode === null) child.kill("SIGKILL")
        await Fs.rm(dir, { recursive: true, force: true })
      })
  )

/** What the operator's `storage-client` role and binding grant a platform ServiceAccount: read and write storage. */
export const grantStorageClient = (kube: DevKube, namespace: string, serviceAccount: string) =>
  kube.seed([
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `${namespace}-storage-client` },
      rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "create"], resourceNames: ["kubemend-storage"] }]
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${namespace}-storage-client-${serviceAccount}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${namespace}-storage-client` },
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }]
    }
  ])
