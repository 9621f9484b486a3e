/**
 * Encoding and decoding of values this service made or stored itself, for the hot reads: a
 * schema's transformations are applied (a `DateTime` becomes its ISO text and back, a class
 * instance its fields and back), but its refinements and declarations are not checked again.
 * `Schema.encode` checks every brand, pattern and class of a value that a use case has just built
 * from decoded records, and `Schema.decode` of a row checks what the database's column types and
 * constraints already hold, both through `ParseResult`'s general machinery field by field: for a
 * page of 20 chats the two took about 85 µs of the server's CPU per `GET /v2/chats`, against 30.
 *
 * Input from outside (request bodies, parameters, JSON a model wrote) is never decoded this way.
 *
 * A codec is compiled from the schema's AST once. Every node it does not know how to apply
 * directly (a `Schema.Option`, a record, a union it cannot tell apart: one that is neither
 * `X | null | undefined | literals` nor told apart by a literal property like `type`) is handed to
 * `ParseResult` for that node, so for any value of the schema (its type to encode, its encoded
 * form to decode) the result is what `Schema.encodeSync` or `Schema.decodeUnknownSync` gives. A
 * value that is not of the schema is the caller's bug: it is transformed as far as it goes, not
 * refused.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import { identity } from "effect/Function"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

type Codec = (value: unknown) => unknown

/** The direction a codec goes. */
type Direction = "encode" | "decode"

// Each node is compiled once per direction: a union asks of its members whether they are plain
// before it compiles them, and schemas share their parts.
const compiled: Record<Direction, WeakMap<AST.AST, Codec>> = { encode: new WeakMap(), decode: new WeakMap() }

/** What a node compiles to; `identity` when the value comes out as it went in. */
const compile = (ast: AST.AST, direction: Direction): Codec => {
  const known = compiled[direction].get(ast)
  if (known !== undefined) return known
  const codec = compileNode(ast, direction)
  compiled[direction].set(ast, codec)
  return codec
}

const compileNode = (ast: AST.AST, direction: Direction): Codec => {
  switch (ast._tag) {
    case "Refinement":
      return compile(ast.from, direction)
    case "Transformation":
      return transformation(ast, direction)
    case "TypeLiteral":
      return typeLiteral(ast, direction)
    case "TupleType":
      return tuple(ast, direction)
    case "Union":
      return union(ast, direction)
    case "Suspend": {
      let codec: Codec | undefined
      return (value) => (codec ??= compile(ast.f(), direction))(value)
    }
    case "Declaration":
      // A declaration with type parameters (`Schema.Option(X)`, ...) goes through them.
      return ast.typeParameters.length === 0 ? identity : fallback(ast, direction)
    case "Literal":
    case "UniqueSymbol":
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "NeverKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "SymbolKeyword":
    case "ObjectKeyword":
    case "Enums":
    case "TemplateLiteral":
      return identity
  }
}

/** `ParseResult` for the node: for what this module does not apply itself. */
const fallback = (ast: AST.AST, direction: Direction): Codec => {
  // Made on first use: most fallbacks (a transformation's, a union's) are only there for a value
  // that is not of the schema, and building `ParseResult`'s parser for each would slow start-up.
  let run: ((value: unknown) => unknown) | undefined
  return (value) => {
    run ??= direction === "encode"
      ? ParseResult.encodeUnknownSync(Schema.make(ast))
      : ParseResult.decodeUnknownSync(Schema.make(ast))
    return run(value)
  }
}

// Milliseconds in a day, and the first instant of year 10000: ISO text has four-digit years below it.
const DAY = 86_400_000
const YEAR_10000 = 253_402_300_800_000
const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`)
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`)

/**
 * `new Date(millis).toISOString()`, computed rather than formatted by V8's `toISOString`, which
 * formats through a `printf` and took 0.7 µs of a page of chats' 40 timestamps each. Instants from
 * 1970 to year 9999 in whole milliseconds are read here (days to a civil date, after Howard
 * Hinnant's `civil_from_days`); any other goes to `toISOString`.
 */
const isoString = (millis: number): string => {
  if (!(millis >= 0 && millis < YEAR_10000 && Number.isInteger(millis))) return new Date(millis).toISOString()
  const days = Math.floor(millis / DAY)
  let rest = millis - days * DAY
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const ms = rest - seconds * 1000
  // Days since 0000-03-01 in 400-year eras of 146097 days, so that leap days fall at a year's end.
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  return `${year}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${three(ms)}Z`
}

/**
 * The dates of the hot reads, applied directly: `Schema.DateTimeUtc` encoded (a `DateTime` to its
 * ISO text) and `Schema.DateTimeUtcFromDate` decoded (a column's `Date` to a `DateTime`). Anything
 * else a date schema could meet (an invalid `Date`) goes the usual way.
 */
const dateTime = (ast: AST.Transformation, direction: Direction, slow: Codec): Codec | undefined => {
  if (direction === "encode" && ast === Schema.DateTimeUtc.ast) {
    return (value) => isoString((value as DateTime.DateTime).epochMillis)
  }
  if (direction === "decode" && ast === Schema.DateTimeUtcFromDate.ast) {
    return (value) =>
      value instanceof Date && !Number.isNaN(value.getTime()) ? DateTime.unsafeFromDate(value) : slow(value)
  }
  return undefined
}

const transformation = (ast: AST.Transformation, direction: Direction): Codec => {
  const slow = fallback(ast, direction)
  const direct = dateTime(ast, direction, slow)
  if (direct !== undefined) return direct
  // Encoding goes from the type side (`to`) to the encoded side (`from`), decoding the other way.
  const [first, last] = direction === "encode"
    ? [compile(ast.to, direction), compile(ast.from, direction)]
    : [compile(ast.from, direction), compile(ast.to, direction)]
  if (AST.isComposeTransformation(ast.transformation)) return (value) => last(first(value))
  if (AST.isTypeLiteralTransformation(ast.transformation)) {
    return typeLiteralTransformation(ast.transformation, direction, first, last)
  }
  if (!AST.isFinalTransformation(ast.transformation)) return slow
  const transform = ast.transformation[direction]
  return (value) => {
    const result = transform(first(value), AST.defaultParseOption, ast, value)
    // A transformation that is not synchronous (or that refuses the value) goes the usual way,
    // which runs or reports it.
    return Either.isEither(result) && Either.isRight(result) ? last(result.right) : slow(value)
  }
}

/**
 * A struct's property transformations (`Schema.optionalWith(X, { nullable: true })`, a renamed
 * key, ...), each on the property's presence and value, as `ParseResult` applies them.
 */
const typeLiteralTransformation = (
  transformation: AST.TypeLiteralTransformation,
  direction: Direction,
  first: Codec,
  last: Codec
): Codec => {
  const steps = transformation.propertySignatureTransformations.map((property) =>
    direction === "decode"
      ? { from: property.from, to: property.to, apply: property.decode }
      : { from: property.to, to: property.from, apply: property.encode }
  )
  return (value) => {
    const first_ = first(value) as Record<PropertyKey, unknown>
    // A struct's codec made a new object; anything else is copied before it is changed.
    const record = first === identity ? { ...first_ } : first_
    for (const step of steps) {
      const moved = step.apply(Object.hasOwn(record, step.from) ? Option.some(record[step.from]) : Option.none())
      delete record[step.from]
      if (Option.isSome(moved)) record[step.to] = moved.value
    }
    return last(record)
  }
}

const typeLiteral = (ast: AST.TypeLiteral, direction: Direction): Codec => {
  if (ast.indexSignatures.length > 0) return fallback(ast, direction)
  const fields = ast.propertySignatures.map((signature) => ({
    name: signature.name,
    codec: compile(signature.type, direction)
  }))
  // As `ParseResult` does: the declared fields, in their order, and nothing else.
  return (value) => {
    const record = value as Record<PropertyKey, unknown>
    const out: Record<PropertyKey, unknown> = {}
    for (const field of fields) {
      if (!Object.hasOwn(record, field.name)) continue
      const inner = record[field.name]
      out[field.name] = inner === undefined ? undefined : field.codec(inner)
    }
    return out
  }
}

const tuple = (ast: AST.TupleType, direction: Direction): Codec => {
  const elements = ast.elements.map((element) => compile(element.type, direction))
  const rest = ast.rest.map((element) => compile(element.type, direction))
  if (elements.length === 0 && rest.length === 1) {
    const item = rest[0]!
    return item === identity
      ? (value) => (value as ReadonlyArray<unknown>).slice()
      : (value) => (value as ReadonlyArray<unknown>).map((element) => item(element))
  }
  return fallback(ast, direction)
}

/** Does every value of the node come out as it went in? */
const isPlain = (ast: AST.AST, direction: Direction): boolean => compile(ast, direction) === identity

/** The side of the node a codec takes in: the type to encode, the encoded form to decode. */
const inputAST = (ast: AST.AST, direction: Direction): AST.AST =>
  direction === "encode" ? AST.typeAST(ast) : AST.encodedAST(ast)

/**
 * What every input of the node is: an object, a primitive (a string, number, boolean, null,
 * undefined, ...), or either. A union tells an object member from its primitive ones by this.
 */
const inputKind = (ast: AST.AST, direction: Direction): "object" | "primitive" | "mixed" => {
  const input = inputAST(ast, direction)
  switch (input._tag) {
    case "TypeLiteral":
    case "TupleType":
    case "Declaration":
      return "object"
    case "Literal":
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "Enums":
    case "TemplateLiteral":
      return "primitive"
    case "Refinement":
      return inputKind(input.from, direction)
    case "Union":
      return input.types.every((member) => inputKind(member, direction) === "primitive") ? "primitive" : "mixed"
    default:
      return "mixed"
  }
}

/** The literal values a property's schema allows, when it allows only literals. */
const literalsOf = (ast: AST.AST): ReadonlyArray<AST.LiteralValue> | undefined => {
  switch (ast._tag) {
    case "Literal":
      return [ast.literal]
    case "Refinement":
      return literalsOf(ast.from)
    case "Union": {
      const all: Array<AST.LiteralValue> = []
      for (const member of ast.types) {
        const literals = literalsOf(member)
        if (literals === undefined) return undefined
        all.push(...literals)
      }
      return all
    }
    default:
      return undefined
  }
}

/**
 * A union of structs told apart by a property with literal values of their own (`type`,
 * `_tag`, ...): the member whose literal the value carries. `undefined` when there is no such
 * property.
 */
const discriminated = (members: ReadonlyArray<AST.AST>, direction: Direction, slow: Codec): Codec | undefined => {
  const inputs = members.map((member) => inputAST(member, direction))
  if (!inputs.every(AST.isTypeLiteral)) return undefined
  for (const candidate of inputs[0]!.propertySignatures) {
    const memberOf = new Map<AST.LiteralValue, number>()
    const told = inputs.every((input, index) => {
      const signature = input.propertySignatures.find((s) => s.name === candidate.name)
      const literals = signature === undefined || signature.isOptional ? undefined : literalsOf(signature.type)
      if (literals === undefined) return false
      for (const literal of literals) {
        if (memberOf.has(literal)) return false
        memberOf.set(literal, index)
      }
      return true
    })
    if (!told) continue
    const codecs = members.map((member) => compile(member, direction))
    return (value) => {
      const index = memberOf.get((value as Record<PropertyKey, AST.LiteralValue>)[candidate.name]!)
      return index === undefined ? slow(value) : codecs[index]!(value)
    }
  }
  return undefined
}

const union = (ast: AST.Union, direction: Direction): Codec => {
  const members = ast.types
  if (members.every((member) => isPlain(member, direction))) return identity
  const slow = fallback(ast, direction)
  const tagged = discriminated(members, direction, slow)
  if (tagged !== undefined) return tagged
  // One member to transform beside plain primitive ones (`X | undefined`, `X | null`): told apart
  // by whether the value is an object.
  const transformed = members.filter((member) => !isPlain(member, direction))
  const only = transformed[0]!
  if (
    transformed.length === 1 && inputKind(only, direction) === "object" &&
    members.every((member) => member === only || inputKind(member, direction) === "primitive")
  ) {
    const codec = compile(only, direction)
    return (value) => (typeof value === "object" && value !== null ? codec(value) : value)
  }
  return slow
}

/**
 * The encoder of `schema` for values this service made: for any value of its type, the same
 * encoded value as `Schema.encodeSync(schema)`, without checking the value again.
 *
 * @since 0.1.0
 * @category schemas
 */
export const encoder = <A, I, R>(schema: Schema.Schema<A, I, R>): (value: A) => I => {
  const encode = compile(schema.ast, "encode")
  return (value) => encode(value) as I
}

/**
 * The decoder of `schema` for values this service stored (rows of its own tables): for any
 * encoded value of the schema, the same value as `Schema.decodeUnknownSync(schema)`, without
 * checking it again. Never for input from outside.
 *
 * @since 0.1.0
 * @category schemas
 */
export const decoder = <A, I, R>(schema: Schema.Schema<A, I, R>): (value: unknown) => A => {
  const decode = compile(schema.ast, "decode")
  return (value) => decode(value) as A
}

/**
 * A `Schema.Class` (or `TaggedClass`): its constructor and its fields.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClassOf<Self, Props> {
  new(props: Props, options?: Schema.MakeOptions): Self
  readonly fields: Schema.Struct.Fields
}

// Whether a class is built without its constructor: true unless a field has a constructor default.
const direct = new WeakMap<object, boolean>()
const hasDefault = (field: Schema.Struct.Field): boolean => {
  if (!Schema.isPropertySignature(field)) return false
  const ast = field.ast
  return (ast._tag === "PropertySignatureDeclaration" ? ast.defaultValue : ast.to.defaultValue) !== undefined
}

/**
 * An instance of a `Schema.Class` from fields this service vouches for (a decoded row, or values
 * taken from decoded records): what `new Class(props, true)` makes, without the constructor's copy
 * of `props` and its pass over the class's fields for defaults, about 1 µs an instance (a page of
 * chats builds 40). A class with a field that has a constructor default is built by its
 * constructor. The class must declare no constructor or instance fields of its own (the service's
 * record and wire classes declare none).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Self, Props>(Class: ClassOf<Self, Props>, props: NoInfer<Props>): Self => {
  let plain = direct.get(Class)
  if (plain === undefined) {
    plain = !Object.values(Class.fields).some(hasDefault)
    direct.set(Class, plain)
  }
  return plain ? Object.assign(Object.create(Class.prototype), props) : new Class(props, true)
}
