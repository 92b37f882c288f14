/**
 * The storage service for in-process composition (the local platform, tests, benchmarks). `StorageServiceLive`
 * needs `StorageConfig`, `ServerConfig`, `K8s` (TokenReview) and the Node platform context; `StorageMainLive` is
 * the same configured from the environment, as `main.ts` runs it.
 */
export { StorageServiceLive } from "./Api.ts"
export { DatabaseLive } from "./Db/Connection.ts"
export * as EmbeddedPg from "./EmbeddedPg.ts"
export { StorageMainLive } from "./Service.ts"
export { StorageConfig, type DatabaseSettings, type StorageSettings } from "./StorageConfig.ts"
