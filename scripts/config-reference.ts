/**
 * Writes docs/configuration.md from the platform CRD and from each service's config module.
 *
 *   node --import tsx scripts/config-reference.ts [--check]
 *
 * Config keys are not guessed from the source: each module's `layerConfig` is run against a recording config provider
 * (the same env-then-file chain as core Config.ts `providerFor`), which yields every YAML key and its environment
 * variable. Setting one key at a time and diffing the settings against the all-defaults run finds the settings
 * field behind the key, hence its default (from the run) and its doc comment (TypeScript compiler API).
 * `--check` exits 1 when the page differs from what would be written.
 */
import { loadYaml } from "@kubernetes/client-node"
import { NodeContext } from "@effect/platform-node"
import { Config, ConfigError, ConfigProvider, Context, Duration, Effect, Either, Equal, HashSet, Layer, Option, Redacted } from "effect"
import * as PathPatch from "effect/ConfigProviderPathPatch"
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"
import { formatGoDuration } from "../packages/core/src/Config.ts"

const root = Path.resolve(import.meta.dirname, "..")
const out = "docs/configuration.md"
const crdFile = "deploy/crds/kubemend.io_kubemends.yaml"

interface Source {
  readonly service: string // the config provider's name: env prefix `<SERVICE>_`
  readonly file: string
  readonly settings: string // interface declared in `file` whose fields carry the doc comments
  readonly tag?: string // an exported class whose `layer` (default `layerConfig`) reads the settings
  readonly layer?: string
  readonly args?: ReadonlyArray<unknown> // when that layer is a function
  readonly config?: string // or an exported `Config`, read under the block `nest`
  readonly nest?: string
  readonly seed?: Readonly<Record<string, string>> // values of required keys no candidate below satisfies
}
// Repoint here when a config module moves.
const sources: ReadonlyArray<Source> = [
  { service: "<service>", file: "packages/core/src/ServerConfig.ts", tag: "ServerConfig", settings: "ServerSettings", args: ["the service's port"] },
  { service: "gateway", file: "packages/gateway/src/GatewayConfig.ts", tag: "GatewayConfig", settings: "GatewaySettings" },
  { service: "gateway", file: "packages/gateway/src/A2a/Config.ts", tag: "A2aConfig", settings: "A2aSettings" },
  { service: "gateway", file: "packages/gateway/src/Status/Config.ts", tag: "StatusConfig", settings: "StatusSettings" },
  { service: "gateway", file: "packages/core/src/Auth/Config.ts", config: "authConfig", nest: "auth", settings: "AuthConfigShape" },
  { service: "gateway", file: "packages/core/src/Sar.ts", tag: "SarConfig", layer: "layerRbac", settings: "SarConfigShape" },
  { service: "agent", file: "packages/agent/src/AgentConfig.ts", tag: "AgentConfig", settings: "AgentSettings" },
  {
    service: "agent",
    file: "packages/core/src/Llm/Config.ts",
    config: "settingsConfig",
    nest: "llm",
    settings: "LlmSettings",
    seed: { "llm.provider": "openai" }
  },
  { service: "agent", file: "packages/core/src/Auth/Config.ts", config: "authConfig", nest: "interactive", settings: "AuthConfigShape" },
  { service: "storage", file: "packages/storage/src/StorageConfig.ts", tag: "StorageConfig", settings: "StorageSettings" },
  { service: "signals", file: "packages/signals/src/SignalsConfig.ts", tag: "SignalsConfig", settings: "SignalsSettings" },
  { service: "console", file: "packages/console/src/ConsoleConfig.ts", tag: "ConsoleConfig", settings: "ConsoleSettings" },
  { service: "operator", file: "packages/operator/src/OperatorConfig.ts", tag: "OperatorConfig", settings: "OperatorSettings" },
  { service: "operator", file: "packages/operator/src/remediation/LifecycleConfig.ts", tag: "LifecycleConfig", settings: "LifecycleSettings" },
  { service: "operator", file: "packages/operator/src/remediation/ExecutionConfig.ts", tag: "ExecutionConfig", settings: "ExecutionSettings" },
  { service: "operator", file: "packages/operator/src/effectiveness/EffectivenessConfig.ts", tag: "EffectivenessConfig", settings: "EffectivenessSettings" },
  { service: "operator", file: "packages/operator/src/notification/NotificationConfig.ts", tag: "NotificationConfig", settings: "NotificationSettings" }
]
// Values tried for a key until its config accepts one; required keys start with one that passes most string checks.
const candidates = ["2", "3", "0.5", "7777", "100000", "true", "false", "7s", "60s", "https://kubemend.example"]
const requiredCandidates = ["https://kubemend.example", ...candidates]

interface Key {
  readonly yaml: string
  readonly env: string
  readonly type: string
  readonly map?: true // enumerated: a map, or a list of blocks when keys below it are read too
}
type Run = Either.Either<unknown, ConfigError.ConfigError>
type ConfigLayer = Layer.Layer<unknown, ConfigError.ConfigError, NodeContext.NodeContext>
type ConfigTag = Context.Tag<unknown, unknown> & Record<string, ConfigLayer | ((...args: ReadonlyArray<unknown>) => ConfigLayer)>
type ConfigModule = Record<string, ConfigTag | Config.Config<unknown>>
interface JsonSchema {
  readonly type?: string
  readonly properties?: Record<string, JsonSchema>
  readonly items?: JsonSchema
  readonly required?: ReadonlyArray<string>
  readonly default?: unknown
  readonly description?: string
  readonly enum?: ReadonlyArray<unknown>
  readonly pattern?: string
  readonly minimum?: number
  readonly maximum?: number
}
interface Crd {
  readonly spec: {
    readonly group: string
    readonly names: { readonly kind: string }
    readonly versions: ReadonlyArray<{ readonly name: string; readonly storage?: boolean; readonly schema: { readonly openAPIV3Schema: JsonSchema } }>
  }
}

/** Runs one module's `layerConfig` with `values` (YAML path -> text) and records the keys it reads. */
const run = (src: Source, mod: ConfigModule, values: ReadonlyMap<string, string>, keys = new Map<string, Key>()): Run => {
  let env = ""
  const missing = (path: ReadonlyArray<string>) => Effect.fail(ConfigError.MissingData([...path], "unset"))
  const envSide = ConfigProvider.fromFlat(ConfigProvider.makeFlat({
    load: (path) => (env = path.join("_"), missing(path)),
    enumerateChildren: (path) => (env = path.join("_"), Effect.succeed(HashSet.empty())),
    patch: PathPatch.empty
  }))
  const fileSide = ConfigProvider.fromFlat(ConfigProvider.makeFlat({
    load: (path, primitive, split) => {
      const yaml = path.join(".")
      const type = String((primitive as { readonly description?: string }).description ?? "").replace(/^an? (.*) property$/, "$1").replace("text", "string")
      if (!keys.has(yaml) || keys.get(yaml)!.map) keys.set(yaml, { yaml, env, type: split ? `list of ${type}` : type })
      const text = values.get(yaml)
      return text === undefined ? missing(path) : Effect.forEach(split ? text.split(",") : [text], (t) => primitive.parse(t))
    },
    enumerateChildren: (path) => {
      const yaml = path.join(".")
      if (!keys.has(yaml)) keys.set(yaml, { yaml, env, type: "map", map: true })
      return Effect.succeed(HashSet.empty())
    },
    patch: PathPatch.empty
  }))
  const provider = envSide.pipe(
    ConfigProvider.nested(src.service === "<service>" ? "SERVICE" : src.service.toUpperCase()),
    ConfigProvider.constantCase,
    ConfigProvider.orElse(() => fileSide)
  )
  const read = (): Effect.Effect<unknown, ConfigError.ConfigError, NodeContext.NodeContext> => {
    if (src.config !== undefined) return Config.nested(mod[src.config] as Config.Config<unknown>, src.nest ?? "")
    const Tag = mod[src.tag ?? ""] as ConfigTag
    const layer = Tag[src.layer ?? "layerConfig"]!
    return Layer.build(typeof layer === "function" ? layer(...(src.args ?? [])) : layer).pipe(
      Effect.map((ctx) => Context.unsafeGet(ctx, Tag)),
      Effect.scoped
    )
  }
  const program = read()
  return Effect.runSync(program.pipe(Effect.withConfigProvider(provider), Effect.provide(NodeContext.layer), Effect.either))
}

/** The YAML paths a config error names (file side: dotted, not constant case). */
const errorPaths = (e: ConfigError.ConfigError): Array<string> =>
  e._op === "And" ?
    [...errorPaths(e.left), ...errorPaths(e.right)] :
    e._op === "Or" ?
    (errorPaths(e.left).length > 0 ? errorPaths(e.left) : errorPaths(e.right)) : // the first alternative
    e._op === "MissingData" || e._op === "InvalidData"
    ? (e.path.some((s) => /[a-z]/.test(s)) ? [e.path.join(".")] : [])
    : []

const plain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype
/** Field paths where `a` and `b` differ. */
const diff = (a: unknown, b: unknown, at: ReadonlyArray<string> = []): Array<ReadonlyArray<string>> => {
  if (Option.isOption(a) && Option.isOption(b) && Option.isSome(a) && Option.isSome(b)) return diff(a.value, b.value, at)
  if (plain(a) && plain(b)) return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) => diff(a[k], b[k], [...at, k]))
  return same(a, b) ? [] : [at]
}
const same = (a: unknown, b: unknown): boolean =>
  Redacted.isRedacted(a) && Redacted.isRedacted(b) ?
    Redacted.value(a) === Redacted.value(b) :
    Equal.isEqual(a)
    ? Equal.equals(a, b)
    : format(a) === format(b)

const format = (v: unknown): string => {
  if (Option.isOption(v)) return Option.match(v, { onNone: () => "unset", onSome: format })
  if (Duration.isDuration(v)) return formatGoDuration(v)
  if (Redacted.isRedacted(v)) return "(secret)"
  if (v instanceof Map) return JSON.stringify(Object.fromEntries(v), (_, x) => Duration.isDuration(x) ? formatGoDuration(x) : x)
  if (v === undefined) return "unset"
  const s = typeof v === "string"
    ? v
    : JSON.stringify(v, (_, x) => Duration.isDuration(x) ? formatGoDuration(x) : Option.isOption(x) ? Option.getOrUndefined(x) : x)
  return s.split(root).join("<repo>")
}

// Doc comments and declared types of the settings interfaces.
const program = ts.createProgram(sources.map((s) => Path.join(root, s.file)), {
  allowImportingTsExtensions: true,
  noEmit: true,
  strict: true,
  skipLibCheck: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext
})
const checker = program.getTypeChecker()
const field = (src: Source, fieldPath: ReadonlyArray<string>): { doc: string; type: string } => {
  const file = program.getSourceFile(Path.join(root, src.file))!
  const decl = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === src.settings)
  let type = decl && checker.getTypeAtLocation(decl), doc = "", typeText = ""
  for (const name of fieldPath) {
    const unwrapped: ts.Type | undefined = type?.aliasSymbol?.name === "Option" ?
      type.aliasTypeArguments?.[0] :
      type && checker.isArrayType(type)
      ? checker.getTypeArguments(type as ts.TypeReference)[0]
      : type
    const prop = unwrapped && checker.getPropertyOfType(unwrapped, name)
    if (!prop) return { doc, type: typeText }
    const own = ts.displayPartsToString(prop.getDocumentationComment(checker))
    if (own !== "") doc = own
    type = checker.getTypeOfSymbol(prop)
    typeText = checker.typeToString(type)
  }
  return { doc, type: typeText }
}

const cell = (s: string) => s.replace(/\s+/g, " ").replace(/\|/g, "\\|").trim()
const code = (s: string) => s === "" ? "" : "`" + s.replace(/`/g, "'") + "`"

const sourceTable = async (src: Source): Promise<string> => {
  const mod = (await import(Path.join(root, src.file))) as ConfigModule
  const required = new Map<string, string>(Object.entries(src.seed ?? {}))
  let keys = new Map<string, Key>(), base: Run = Either.left(ConfigError.MissingData([], ""))
  for (let i = 0; i < 20; i++) {
    // give required keys a value the key accepts
    keys = new Map()
    base = run(src, mod, required, keys)
    if (Either.isRight(base)) break
    for (const error of errorPaths(base.left)) {
      // An error may name a path below the key that was read (`llm.provider.provider`).
      const path = [...keys.keys()].filter((k) => error === k || error.startsWith(k + ".")).sort((a, b) => b.length - a.length)[0] ?? error
      required.set(path, requiredCandidates[(requiredCandidates.indexOf(required.get(path) ?? "") + 1) % requiredCandidates.length]!)
    }
  }
  if (Either.isLeft(base)) {
    throw new Error(`${src.file}: ${src.tag ?? src.config} does not run with defaults: ${String(base.left)} ${JSON.stringify([...required])}`)
  }
  const runs = new Map<string, Run>()
  const cached = (values: ReadonlyMap<string, string>) => {
    const id = JSON.stringify([...values].sort())
    if (!runs.has(id)) runs.set(id, run(src, mod, values))
    return runs.get(id)!
  }
  /** The settings fields `key` sets on top of `context`, and the run they are compared with. */
  const probe = (key: Key, context: ReadonlyMap<string, string>) => {
    const before = cached(new Map([...required, ...context]))
    if (key.map || Either.isLeft(before)) return undefined
    for (const value of candidates) {
      const r = cached(new Map([...required, ...context, [key.yaml, value]]))
      const fields = Either.isRight(r) ? diff(before.right, r.right) : []
      if (fields.length > 0) return { fields, before: before.right, value }
    }
    return undefined
  }
  const alone = new Map([...keys.values()].map((key) => [key.yaml, probe(key, new Map())]))
  const parent = (yaml: string) => yaml.replace(/\.?[^.]*$/, "")
  const rows = [...keys.values()].map((key) => {
    const siblings = [...keys.values()].filter((k) => k !== key && parent(k.yaml) === parent(key.yaml))
    const context = (all: boolean) =>
      new Map(siblings.flatMap((k) => alone.get(k.yaml) ? [[k.yaml, alone.get(k.yaml)!.value] as const] : all ? [[k.yaml, candidates[0]!] as const] : []))
    // A key may only count with its block: `valkey.port` with `valkey.host` set, `tls.certFile` with `tls.keyFile`.
    const inList = [...keys.values()].some((k) => k.map && key.yaml.startsWith(k.yaml + "."))
    const found = inList ? undefined : alone.get(key.yaml) ?? probe(key, context(false)) ?? probe(key, context(true))
    const at = found?.fields[0] ?? []
    // Without a field found by diffing, the key's path minus its leading blocks (`notification.`) may name one.
    const segments = key.yaml.split(".")
    const info = at.length > 0 ? field(src, at) : segments.map((_, i) => field(src, segments.slice(i))).find((f) => f.type !== "") ?? { doc: "", type: "" }
    const child = (v: unknown, k: string): unknown =>
      Option.isOption(v) ? Option.getOrUndefined(Option.map(v, (x) => child(x, k))) : (v as Record<string, unknown> | undefined)?.[k]
    const value = at.reduce(child, found?.before)
    const type = /Duration/.test(info.type) && key.type === "string" ? "duration" : key.type
    // A scalar key whose field is a whole block or list (`auth.issuerURL` -> `providers`) has no default of its own.
    const own = key.type.startsWith("list") || key.map || !(Array.isArray(value) || plain(value))
    const dflt = required.has(key.yaml) ? "required" : at.length === 0 || !own ? "" : code(format(value))
    // A list of blocks (`receivers: [{ name, slack }]`) is enumerated at its path and read per leaf.
    const list = inList ? [...keys.values()].find((k) => k.map && key.yaml.startsWith(k.yaml + ".")) : undefined
    const name = list ? key.yaml.replace(list.yaml + ".", list.yaml + "[].") : key.yaml
    const shown = list ? type.replace(/^list of /, "") : key.map && [...keys.keys()].some((y) => y.startsWith(key.yaml + ".")) ? "list" : type
    return `| ${
      code(name)
    } | ${(list ? "" : code(src.service === "<service>" ? key.env.replace(/^SERVICE_/, "<SERVICE>_") : key.env))} | ${shown} | ${dflt} | ${cell(info.doc)} |`
  })
  return [
    `Declared in \`${src.file}\` (\`${src.settings}\`${src.nest === undefined ? "" : `, under \`${src.nest}\``}).`,
    "",
    "| Key | Environment | Type | Default | Description |",
    "| --- | --- | --- | --- | --- |",
    ...rows
  ].join("\n")
}

const crdRows = (schema: JsonSchema, at: string, rows: Array<string>) => {
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const path = at === "" ? name : `${at}.${name}`
    const item = prop.type === "array" ? prop.items ?? {} : prop
    const type = prop.type === "array" ? `array of ${item.type ?? "any"}` : prop.type ?? "any"
    const extra = [
      item.enum && `one of ${item.enum.map((e) => code(String(e))).join(", ")}`,
      item.pattern && `pattern ${code(item.pattern)}`,
      prop.minimum !== undefined && `min ${prop.minimum}`,
      prop.maximum !== undefined && `max ${prop.maximum}`
    ].filter(Boolean)
    rows.push(
      `| ${code(path)} | ${type}${(schema.required ?? []).includes(name) ? " (required)" : ""} | ${
        prop.default === undefined ? "" : code(JSON.stringify(prop.default))
      } | ${cell([prop.description ?? "", ...extra].join(" "))} |`
    )
    crdRows(item, prop.type === "array" ? `${path}[]` : path, rows)
  }
  return rows
}

const render = async (): Promise<string> => {
  const crd = loadYaml<Crd>(Fs.readFileSync(Path.join(root, crdFile), "utf8"))
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0]
  const services = [...new Set(sources.map((s) => s.service))]
  const sections: Array<string> = []
  for (const service of services) {
    sections.push(`## ${service === "<service>" ? "Every service" : service}`)
    for (const src of sources.filter((s) => s.service === service)) sections.push(await sourceTable(src))
  }
  return [
    "<!-- Generated by scripts/config-reference.ts (npm run docs:config). Do not edit; npm run docs:check fails when it is stale. -->",
    "# Configuration reference",
    "",
    "Each service reads one YAML file named by `CONFIG_FILE` (camelCase keys, the table's Key column). An environment",
    "variable overrides one key: the service's name and the key's path in constant case (the Environment column; core",
    "`Config.ts` `providerFor`), and it wins over the file. Lists are comma separated in the environment. Durations are",
    "Go duration strings (`30s`, `15m`, `2160h`). A bad value stops the service at start with a line naming the key.",
    "In a cluster the operator renders these files from the platform CR (`packages/operator/src/platform/RenderConfig.ts`).",
    "A key with a `map` type takes an object of entries (`tools.timeouts: { svc_watch: 20m }`).",
    "",
    ...sections.flatMap((s) => [s, ""]),
    `## The platform CR (\`${crd.spec.names.kind}\`, \`${crd.spec.group}/${version.name}\`)`,
    "",
    `From \`${crdFile}\` (generated from the domain schemas; fields under \`spec\`).`,
    "",
    "| Field | Type | Default | Notes |",
    "| --- | --- | --- | --- |",
    ...crdRows(version.schema.openAPIV3Schema.properties?.spec ?? {}, "spec", []),
    ""
  ].join("\n")
}

const text = await render()
const target = Path.join(root, out)
if (process.argv.includes("--check")) {
  const current = Fs.existsSync(target) ? Fs.readFileSync(target, "utf8") : ""
  if (current !== text) {
    console.error(`${out} is stale: the config modules or the platform CRD changed. Run \`npm run docs:config\` and commit it.`)
    process.exit(1)
  }
  console.log(`${out} is current`)
} else {
  Fs.writeFileSync(target, text)
  console.log(`wrote ${out}`)
}
