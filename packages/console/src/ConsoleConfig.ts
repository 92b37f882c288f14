/**
 * The console's settings, from the `console` config provider (YAML `CONFIG_FILE` + `CONSOLE_*` env): where the
 * gateway is, the OIDC issuer and confidential client (the Secret's `client-id`, `client-secret`, `cookie-secret`
 * arrive as `CONSOLE_CLIENT_ID`, `CONSOLE_CLIENT_SECRET`, `CONSOLE_COOKIE_SECRET`), the public redirect URL and
 * the proxy timeouts of document 3. Each secret may instead name a file (`clientIdFile`, …): the mounted Secret.
 */
import { Config, ConfigError, Context, Duration, Either, Layer, Redacted } from "effect"
import { duration } from "@kubemend/core/Config"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"

export interface ConsoleSettings {
  /** The gateway (API frontend) the console proxies to, e.g. `http://kubemend-gateway:8443`. */
  readonly gatewayURL: string
  /** The OIDC issuer: the first JWT provider's, else `console.auth.issuerURL`. */
  readonly issuerURL: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** Keys the session cookie's encryption (any length; a key is derived from it). */
  readonly cookieSecret: Redacted.Redacted<string>
  /** The browser-facing callback, `<console URL>/oauth2/callback`; its scheme decides `Secure` cookies and HSTS. */
  readonly redirectURL: string
  /** The built single-page app (index.html and assets). */
  readonly staticDir: string
  /** Refresh the access token when it expires within this. */
  readonly refreshBefore: Duration.Duration
  /** How long a session lasts with a refresh token (without one, until its access token expires). */
  readonly sessionLifetime: Duration.Duration
  /** Longest silence from the gateway on `/a2a/` (SSE streams stay open that long between events). */
  readonly a2aTimeout: Duration.Duration
  readonly mcpTimeout: Duration.Duration
}

/** `packages/console/dist/web`, from the sources (`src/`) and from the built JavaScript (`dist/`) alike. */
export const defaultStaticDir = fileURLToPath(new URL("../dist/web", import.meta.url))

/** The console's public origin (for the gateway's allowed origins and the logout redirect). */
export const publicOrigin = (settings: Pick<ConsoleSettings, "redirectURL">) => new URL(settings.redirectURL).origin

export const isSecure = (settings: Pick<ConsoleSettings, "redirectURL">) => new URL(settings.redirectURL).protocol === "https:"

const url = (name: string) =>
  Config.string(name).pipe(Config.validate({ message: "must be an absolute http(s) URL", validation: (s) => /^https?:\/\/[^/]/.test(s) }))

/** `name` itself, or the trimmed content of the file `<name>File` (a mounted Secret key, as the operator renders it). */
const secret = (name: string) =>
  Config.redacted(name).pipe(Config.orElse(() =>
    Config.string(`${name}File`).pipe(Config.mapOrFail((path) => {
      try {
        return Either.right(Redacted.make(Fs.readFileSync(path, "utf8").trim()))
      } catch (e) {
        return Either.left(ConfigError.InvalidData([`${name}File`], `cannot read ${path}: ${String(e)}`))
      }
    }))
  ))

const consoleConfig = Config.all({
  gatewayURL: url("gatewayURL"),
  issuerURL: url("issuerURL"),
  clientId: secret("clientId").pipe(
    Config.map(Redacted.value),
    Config.validate({ message: "must not be empty", validation: (s) => s !== "" })
  ),
  clientSecret: secret("clientSecret"),
  cookieSecret: secret("cookieSecret").pipe(
    Config.validate({ message: "must be at least 16 characters", validation: (s) => Redacted.value(s).length >= 16 })
  ),
  redirectURL: url("redirectURL"),
  staticDir: Config.string("staticDir").pipe(Config.withDefault(defaultStaticDir)),
  refreshBefore: duration("refreshBefore").pipe(Config.withDefault(Duration.seconds(60))),
  sessionLifetime: duration("sessionLifetime").pipe(Config.withDefault(Duration.hours(12))),
  a2aTimeout: duration("a2aTimeout").pipe(Config.withDefault(Duration.seconds(3600))),
  mcpTimeout: duration("mcpTimeout").pipe(Config.withDefault(Duration.seconds(30)))
})

export class ConsoleConfig extends Context.Tag("@kubemend/console/ConsoleConfig")<ConsoleConfig, ConsoleSettings>() {
  static readonly layerConfig = Layer.effect(ConsoleConfig, consoleConfig)
  static readonly layer = (settings: ConsoleSettings) => Layer.succeed(ConsoleConfig, settings)
}
