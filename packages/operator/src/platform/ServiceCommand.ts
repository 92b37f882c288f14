/**
 * How a service starts from the built image (`npm run build`): plain `node` on the package's `dist/main.js`, with
 * the workspace packages resolved to their built JavaScript (`kubemend-dist` export condition, see each package's
 * `exports`) and stack traces mapped back to the TypeScript. No TypeScript tooling at run time.
 */
export const builtNodeFlags = ["--conditions=kubemend-dist", "--enable-source-maps"] as const

/** The container command of `svc` (a package under `packages/`), relative to the image's working directory. */
export const serviceCommand = (svc: string, ...args: ReadonlyArray<string>): ReadonlyArray<string> => [
  "node",
  ...builtNodeFlags,
  `packages/${svc}/dist/main.js`,
  ...args
]
