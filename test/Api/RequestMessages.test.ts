/**
 * Every issue a request can produce has its message on the request schema (src/Api/RequestMessages.ts):
 * a node of any endpoint's path, query, headers or body without a `message` annotation would answer
 * with Effect's English text, so it fails here. And the message of each kind of node, as a 422 says it.
 */
import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"
import { Api } from "../../src/Api/Api.js"
import { hasMessage, schemaWithMessages } from "../../src/Api/RequestMessages.js"
import { BoundedString, RequiredString } from "../../src/Api/Schemas.js"
import { fieldMessages, humanMessage } from "../../src/Layers/Http/Errors.js"

/**
 * Nodes under `ast` that would answer with Effect's text: one without a message, or a union whose
 * members are told apart by a literal field (its issues are on nodes the parser makes, which carry
 * no annotation).
 */
const unannotated = (ast: AST.AST, at: string, seen = new Set<AST.AST>()): Array<string> => {
  if (seen.has(ast)) return []
  seen.add(ast)
  const found = hasMessage(ast) ? [] : [`${at}: ${ast._tag} ${String(ast).slice(0, 60)}`]
  const walk = (child: AST.AST, path = at) => found.push(...unannotated(child, path, seen))
  switch (ast._tag) {
    case "Declaration":
      ast.typeParameters.forEach((parameter) => walk(parameter))
      break
    case "Refinement":
      walk(ast.from)
      break
    case "Transformation":
      walk(ast.from)
      walk(ast.to)
      break
    case "Suspend":
      walk(ast.f())
      break
    case "TupleType":
      ast.elements.forEach((element, i) => walk(element.type, `${at}[${i}]`))
      ast.rest.forEach((rest) => walk(rest.type, `${at}[]`))
      break
    case "TypeLiteral":
      ast.propertySignatures.forEach((property) => walk(property.type, `${at}.${String(property.name)}`))
      ast.indexSignatures.forEach((index) => walk(index.type, `${at}{}`))
      break
    case "Union":
      if (ast.types.some(isTagged)) found.push(`${at}: union told apart by a literal field`)
      ast.types.forEach((member) => walk(member))
      break
  }
  return found
}

/** A member the union parser picks by a literal field (`{ kind: "a", … }`). */
const isTagged = (member: AST.AST): boolean => {
  const encoded = AST.encodedAST(member)
  return AST.isTypeLiteral(encoded) && encoded.propertySignatures.some((property) => AST.isLiteral(property.type) && !property.isOptional)
}

const requestSchemas = (api: HttpApi.HttpApi.Any) => {
  const schemas: Array<readonly [string, AST.AST]> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const e = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      const name = `${e.method} ${e.path}`
      for (const [part, schema] of [["path", e.pathSchema], ["query", e.urlParamsSchema], ["headers", e.headersSchema], ["body", e.payloadSchema]] as const) {
        if (Option.isSome(schema)) schemas.push([`${name} ${part}`, schema.value.ast])
      }
    }
  })
  return schemas
}

/** The 422 messages of decoding `input` with `schema` given every node its message. */
const messagesOf = (schema: Schema.Schema.Any, input: unknown) => {
  const result = Schema.decodeUnknownEither(schemaWithMessages(schema as Schema.Schema<unknown, unknown>), { errors: "all" })(input)
  if (Either.isRight(result)) return "decoded"
  return fieldMessages(ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => ({ ...issue, path: issue.path.length === 0 ? [] : ["body", ...issue.path] })))
}

describe("request messages", () => {
  it("every node of every request schema of the Api has its message", () => {
    const schemas = requestSchemas(Api)
    expect(schemas.length).toBeGreaterThan(200)
    expect(schemas.flatMap(([name, ast]) => unannotated(ast, name))).toEqual([])
  })

  it("the check itself finds nodes without a message and unions it cannot name", () => {
    const plain = Schema.Struct({ a: Schema.Number, b: Schema.Array(Schema.String.annotations({ message: () => "is invalid" })) })
    expect(unannotated(plain.ast, "body")).toEqual([
      "body: TypeLiteral { readonly a: number; readonly b: ReadonlyArray<string> }",
      "body.a: NumberKeyword number",
      "body.b: TupleType ReadonlyArray<string>"
    ])
    expect(unannotated(schemaWithMessages(plain).ast, "body")).toEqual([])
    const tagged = Schema.Union(Schema.Struct({ kind: Schema.Literal("a") }), Schema.Struct({ kind: Schema.Literal("b") }))
    expect(unannotated(schemaWithMessages(tagged).ast, "body")).toEqual(["body: union told apart by a literal field"])
  })

  it("a value of the wrong kind gets the message of its kind", () => {
    const Thing = Schema.Struct({
      count: Schema.Number,
      whole: Schema.Int,
      page: Schema.optional(Schema.NumberFromString),
      kind: Schema.Literal("a", "b"),
      flag: Schema.optional(Schema.NullOr(Schema.Boolean)),
      tags: Schema.optional(Schema.Array(Schema.String)),
      nested: Schema.optional(Schema.Struct({ name: Schema.String })),
      positive: Schema.optional(Schema.Int.pipe(Schema.positive()))
    })
    expect(messagesOf(Thing, { count: "1", whole: 1.5, page: "abc", kind: "c", flag: 1, tags: "t", nested: [], positive: 0 })).toEqual({
      count: ["is not a number"],
      whole: ["is not a number"],
      page: ["is not a number"],
      kind: ["is not included in the list"],
      flag: ["must be true or false"],
      tags: ["must be a list"],
      nested: ["must be an object"],
      positive: ["is invalid"]
    })
    expect(messagesOf(Thing, { count: 1, whole: 1, kind: "a", page: "", tags: [5] })).toEqual({ page: ["is not a number"], "tags[0]": ["is invalid"] })
  })

  it("null or an empty text is blank, and so is a missing field", () => {
    const Thing = Schema.Struct({ count: Schema.Number, kind: Schema.Literal("a", "b"), name: Schema.String, title: RequiredString(10) })
    expect(messagesOf(Thing, { count: null, kind: "", title: "" })).toEqual({
      count: ["can't be blank"],
      kind: ["can't be blank"],
      name: ["can't be blank"],
      title: ["can't be blank"]
    })
  })

  it("a field's own message stays, and a node with a name of ours is invalid rather than its kind", () => {
    class Request extends Schema.Class<Request>("Request")({
      note: BoundedString(3),
      range: Schema.optional(Schema.Struct({ from: Schema.String }).annotations({ description: "Days, both inclusive" })),
      plan: Schema.optional(Schema.Int.annotations({ description: "The plan" }))
    }) {}
    expect(messagesOf(Request, { note: "long", range: 5, plan: 1.5 })).toEqual({
      note: ["is too long (maximum is 3 characters)"],
      range: ["is invalid"],
      plan: ["is invalid"]
    })
    expect(messagesOf(Request, [])).toEqual({ base: ["is invalid"] })
    expect(messagesOf(Schema.Struct({ a: Schema.String }), 5)).toEqual({ base: ["must be an object"] })
  })

  it("the 422 message of an issue is its tag's for a missing or unexpected field, else its annotated message", () => {
    expect(humanMessage({ _tag: "Missing", message: "is missing" })).toBe("can't be blank")
    expect(humanMessage({ _tag: "Unexpected", message: "is unexpected" })).toBe("is not allowed")
    expect(humanMessage({ _tag: "Forbidden", message: "is forbidden" })).toBe("is invalid")
    expect(humanMessage({ _tag: "Type", message: "must be a list" })).toBe("must be a list")
    expect(humanMessage({ _tag: "Refinement", message: "is too long (maximum is 3 characters)" })).toBe("is too long (maximum is 3 characters)")
  })
})
