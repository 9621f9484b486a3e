/**
 * The prefix of every table, index and constraint Sightline creates, so that it can live inside a
 * host application's database (`sightline_members` beside the host's own `members`) and so that two
 * Sightline stores can share one database.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * A valid prefix: lowercase (PostgreSQL folds unquoted names, and the prefix must name the same
 * table quoted or not) and at most 30 characters, so that a prefixed index name stays within
 * PostgreSQL's 63-byte identifier limit (longer names are silently truncated and could collide).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Prefix = Schema.String.pipe(
  Schema.pattern(/^[a-z_][a-z0-9_]*$/, {
    message: () => "a table prefix is lowercase letters, digits and underscores, and does not start with a digit"
  }),
  Schema.maxLength(30, { message: () => "a table prefix is at most 30 characters" }),
  Schema.brand("@sightline/sql/TablePrefix")
)
export type Prefix = typeof Prefix.Type

/**
 * The prefix used when none is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPrefix: Prefix = Prefix.make("sightline_")

/**
 * The table prefix in use.
 *
 * @since 0.1.0
 * @category services
 */
export class TablePrefix extends Context.Tag("@sightline/sql/TablePrefix")<TablePrefix, TablePrefix.Service>() {}

export declare namespace TablePrefix {
  /** The prefix, and the naming of every database object through it. */
  export interface Service {
    readonly prefix: Prefix
    /** The full name of a table, index or constraint (`members` → `sightline_members`). */
    readonly name: (name: string) => string
  }
}

/**
 * A prefix service from a valid prefix.
 *
 * @since 0.1.0
 * @category utils
 */
export const fromPrefix = (prefix: Prefix): TablePrefix.Service => ({
  prefix,
  name: (name) => `${prefix}${name}`
})

/**
 * Validates a prefix and builds the service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (prefix: string): Either.Either<TablePrefix.Service, Cause.IllegalArgumentException> =>
  Schema.decodeEither(Prefix)(prefix).pipe(
    Either.mapBoth({
      onLeft: (error) =>
        new Cause.IllegalArgumentException(
          `Invalid table prefix "${prefix}": ${ParseResult.TreeFormatter.formatErrorSync(error)}`
        ),
      onRight: fromPrefix
    })
  )

/**
 * The given prefix (default `sightline_`); an invalid one fails the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (prefix: string = defaultPrefix): Layer.Layer<TablePrefix, Cause.IllegalArgumentException> =>
  Layer.effect(TablePrefix, make(prefix))

/**
 * The prefix from `SIGHTLINE_TABLE_PREFIX` (default `sightline_`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config<string> = Config.string("SIGHTLINE_TABLE_PREFIX").pipe(Config.withDefault(defaultPrefix))
): Layer.Layer<TablePrefix, ConfigError.ConfigError | Cause.IllegalArgumentException> =>
  Layer.effect(TablePrefix, Effect.flatMap(config, make))
