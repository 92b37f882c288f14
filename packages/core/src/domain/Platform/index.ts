/** The platform custom resource (kind `Kubemend`). */
export * from "./Agent.ts"
export * from "./ApiFrontend.ts"
export * from "./Controllers.ts"
export * from "./Infra.ts"
export * from "./Shared.ts"
export * from "./Spec.ts"
export * from "./Validate.ts"
