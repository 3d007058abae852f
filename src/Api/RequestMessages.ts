/**
 * The message of every issue a request can produce comes from the request schema itself: a
 * `message` annotation on each node, which Effect's formatters use in place of their English
 * text. A field declared with a message of its own (`RequiredString`'s "can't be blank", an id's
 * "is invalid") keeps it; every other node of an endpoint's path, query, headers and body gets the
 * message of its kind here (general §7: "is not a number", "must be a list" …). So the 422 bodies
 * (src/Layers/Http/Errors.ts) are built from annotations and issue tags only, never from Effect's
 * text. test/Api/RequestMessages.test.ts fails for a request node left without a message.
 */
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Context, Option, type ParseResult, Schema, SchemaAST as AST } from "effect"

export const requestMessages = {
  blank: "can't be blank",
  notAllowed: "is not allowed",
  invalid: "is invalid",
  notANumber: "is not a number",
  notInList: "is not included in the list",
  notABoolean: "must be true or false",
  notAList: "must be a list",
  notAnObject: "must be an object"
} as const

/** The title Effect gives the encoded side of a class ("CreateSlotRequest (Encoded side)"). */
const getAutoTitle = AST.getAnnotation<string>(Symbol.for("effect/annotation/AutoTitle"))

/**
 * The name a node goes by: its identifier, title or description (a check's description first, as
 * in "an integer").
 */
const nameOf = (ast: AST.AST): string | undefined => {
  const names = AST.isRefinement(ast)
    ? [AST.getDescriptionAnnotation(ast), AST.getTitleAnnotation(ast), getAutoTitle(ast), AST.getIdentifierAnnotation(ast)]
    : [AST.getIdentifierAnnotation(ast), AST.getTitleAnnotation(ast), AST.getDescriptionAnnotation(ast), getAutoTitle(ast)]
  return Option.getOrUndefined(Option.firstSomeOf(names))
}

/** Effect names its own schemas by their kind ("number", "an integer"). */
const kindNames: ReadonlySet<string | undefined> = new Set(
  [Schema.String, Schema.Number, Schema.Boolean, Schema.Undefined, Schema.Unknown, Schema.Int, Schema.Finite].map((s) => nameOf(s.ast))
)

/**
 * A node with a name of ours (a class, a described struct, an id) is something specific: a value
 * that does not fit "is invalid", whatever its kind.
 */
const hasOwnName = (ast: AST.AST): boolean => {
  const name = nameOf(ast)
  return name !== undefined && !kindNames.has(name)
}

/** The message of a value that is not of `ast`'s kind (a text where a number goes …). */
export const kindMessage = (ast: AST.AST): string => {
  // A value that does not transform into the target (`NumberFromString` given "abc") is not one.
  if (AST.isTransformation(ast)) return kindMessage(ast.to)
  if (hasOwnName(ast)) return requestMessages.invalid
  switch (ast._tag) {
    case "NumberKeyword":
      return requestMessages.notANumber
    case "BooleanKeyword":
      return requestMessages.notABoolean
    case "Literal":
      return typeof ast.literal === "string"
        ? requestMessages.notInList
        : typeof ast.literal === "boolean" ? requestMessages.notABoolean : requestMessages.invalid
    case "Union":
      // A union is named by its first member: `"a" | "b"` is a list of values, `number | null` a number.
      return kindMessage(ast.types[0])
    case "TupleType":
      return requestMessages.notAList
    case "TypeLiteral":
      return requestMessages.notAnObject
    case "Refinement":
      return isNumberKindCheck(ast) ? requestMessages.notANumber : requestMessages.invalid
    default:
      return requestMessages.invalid
  }
}

/** An integer or a finite number asked for: 1.5 for an integer is "not a number", as Rails says. */
const isNumberKindCheck = (ast: AST.Refinement): boolean => {
  const schemaId = ast.annotations[AST.SchemaIdAnnotationId]
  return schemaId === Schema.IntSchemaId || schemaId === Schema.FiniteSchemaId
}

/** Absent in substance: JSON `null` or an empty text. */
const isBlank = (actual: unknown) => actual === null || actual === undefined || actual === ""

/**
 * The default message of a node: a blank value is "can't be blank" wherever a value was checked;
 * a failed transformation names its target whatever its input (`""` is not a number).
 */
export const defaultMessage = (ast: AST.AST): AST.MessageAnnotation => {
  const message = kindMessage(ast)
  if (AST.isTransformation(ast)) return () => message
  return (issue: ParseResult.ParseIssue) => ("actual" in issue && isBlank(issue.actual) ? requestMessages.blank : message)
}

export const hasMessage = (ast: AST.AST): boolean => Option.isSome(AST.getMessageAnnotation(ast))

/**
 * A copy of `node` with some fields replaced. Built from its descriptors rather than with
 * `SchemaAST.annotations`, which drops the identifier (and so the document's `$ref`).
 */
const copyOf = <A extends object>(node: A, fields: Partial<Record<keyof A, unknown>>): A =>
  Object.create(Object.getPrototypeOf(node), {
    ...Object.getOwnPropertyDescriptors(node),
    ...Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, { value, enumerable: true, writable: true, configurable: true }]))
  })

/**
 * `ast` with a message on every node that lacks one. Shared nodes (a domain field used by many
 * requests) stay shared, and a recursive schema is followed lazily.
 */
const annotator = () => {
  const done = new Map<AST.AST, AST.AST>()
  const go = (ast: AST.AST): AST.AST => {
    const known = done.get(ast)
    if (known !== undefined) return known
    const annotations = hasMessage(ast) ? ast.annotations : { ...ast.annotations, [AST.MessageAnnotationId]: defaultMessage(ast) }
    // Registered before its children are visited, so a `Suspend` that reaches itself ends here.
    const copy = copyOf(ast, { annotations })
    done.set(ast, copy)
    Object.assign(copy, childrenOf(ast, go))
    return copy
  }
  return go
}

const childrenOf = (ast: AST.AST, go: (ast: AST.AST) => AST.AST): object => {
  switch (ast._tag) {
    case "Declaration":
      return { typeParameters: ast.typeParameters.map(go) }
    case "Refinement":
      return { from: go(ast.from) }
    case "Transformation":
      return { from: go(ast.from), to: go(ast.to) }
    case "Union":
      return { types: ast.types.map(go) }
    case "Suspend":
      return { f: () => go(ast.f()) }
    case "TupleType":
      return {
        elements: ast.elements.map((element) => copyOf(element, { type: go(element.type) })),
        rest: ast.rest.map((rest) => copyOf(rest, { type: go(rest.type) }))
      }
    case "TypeLiteral":
      return {
        propertySignatures: ast.propertySignatures.map((property) => copyOf(property, { type: go(property.type) })),
        indexSignatures: ast.indexSignatures.map((index) => copyOf(index, { type: go(index.type) }))
      }
    default:
      return {}
  }
}

/** `schema` with a message on every node (as each endpoint of `withRequestMessages` decodes). */
export const schemaWithMessages = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
  Schema.make(annotator()(schema.ast))

const endpointWithMessages = (
  go: (ast: AST.AST) => AST.AST,
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
): HttpApiEndpoint.HttpApiEndpoint.AnyWithProps => {
  const annotate = (schema: Option.Option<Schema.Schema.Any>) => Option.map(schema, (s) => Schema.make(go(s.ast)))
  return copyOf(endpoint, {
    pathSchema: annotate(endpoint.pathSchema),
    urlParamsSchema: annotate(endpoint.urlParamsSchema),
    headersSchema: annotate(endpoint.headersSchema),
    payloadSchema: annotate(endpoint.payloadSchema)
  })
}

const mapValues = <A, B>(record: { readonly [key: string]: A }, f: (a: A) => B): { [key: string]: B } =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]))

type Mutable<A> = { -readonly [K in keyof A]: A[K] }

/**
 * `api` whose every endpoint decodes its path, query, headers and body with a message on each
 * schema node. Only messages are added: the document and what each request decodes to are the
 * same. Groups and the Api are copied the way the platform's own `addHttpApi` copies a group.
 */
export const withRequestMessages = <A extends HttpApi.HttpApi.Any>(api: A): A => {
  const go = annotator()
  const source = api as unknown as HttpApi.HttpApi.AnyWithProps
  const copy: Mutable<HttpApi.HttpApi.AnyWithProps> = source.annotateContext(Context.empty())
  copy.groups = mapValues(source.groups, (group) => {
    const groupCopy: Mutable<HttpApiGroup.HttpApiGroup.AnyWithProps> = group.annotateContext(Context.empty())
    groupCopy.endpoints = mapValues(group.endpoints, (endpoint) => endpointWithMessages(go, endpoint))
    return groupCopy as HttpApiGroup.HttpApiGroup.AnyWithProps
  })
  return copy as unknown as A
}
