/**
 * The document as a validator: ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) compiled from
 * the served document itself, not from the server's schemas, so a response that drifts from the
 * document fails even when the server's own encoder is happy with it.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import type { OpenApiDocument, Operation } from "./document.js"
import type { Draft } from "./generate.js"
import { formParamsOf } from "./signature.js"

const documentId = "urn:harness:openapi"

const pointerSegment = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")

export interface Contract {
  /** Errors of a response body against the schema the document declares for its status; [] when it conforms. */
  readonly responseErrors: (operation: Operation, status: number, body: unknown) => ReadonlyArray<string>
  /** Why the document itself says this request is invalid (so the server must refuse it); [] when it does not. */
  readonly requestViolations: (operation: Operation, draft: Draft) => ReadonlyArray<string>
}

export const makeContract = (document: OpenApiDocument): Contract => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  addFormats.default(ajv)
  ajv.addSchema({ ...document, $id: documentId })
  const compiled = new Map<string, ValidateFunction>()
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer)
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `${documentId}#${pointer}` })
      compiled.set(pointer, validate)
    }
    return validate
  }
  const operationPointer = (operation: Operation) =>
    `/paths/${pointerSegment(operation.path)}/${operation.method.toLowerCase()}`
  const errorsOf = (validate: ValidateFunction, value: unknown): ReadonlyArray<string> =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`)

  const responseErrors = (operation: Operation, status: number, body: unknown): ReadonlyArray<string> => {
    if (!operation.responses.has(status)) return [`status ${status} is not declared`]
    if (operation.responses.get(status) === undefined) {
      return body === undefined ? [] : ["the document declares no content, the response has a body"]
    }
    if (body === undefined) return ["the document declares a JSON body, the response has none (or it is not JSON)"]
    return errorsOf(validatorAt(`${operationPointer(operation)}/responses/${status}/content/application~1json/schema`), body)
  }

  const requestViolations = (operation: Operation, draft: Draft): ReadonlyArray<string> => {
    const violations: Array<string> = []
    operation.parameters.forEach((parameter, index) => {
      if (parameter.in !== "query") return
      const values = draft.query.filter(([name]) => name === parameter.name).map(([, value]) => value)
      if (parameter.required && values.length === 0) violations.push(`query parameter ${parameter.name} is required`)
      const isList = parameter.schema.type === "array"
      if (!isList && values.length > 1) violations.push(`query parameter ${parameter.name} is given ${values.length} times`)
      if (!isList && values.length === 1 && parameter.schema.type === "string") {
        const errors = errorsOf(validatorAt(`${operationPointer(operation)}/parameters/${index}/schema`), values[0])
        if (errors.length > 0) violations.push(`query parameter ${parameter.name}: ${errors.join("; ")}`)
      }
    })
    if (operation.body !== undefined) {
      if (draft.body.kind === "none" && operation.bodyRequired) violations.push("the body is required")
      if (draft.body.kind === "json" && operation.bodyEncoding === "form") {
        // A form carries string pairs: judge the pairs sent (signature.ts `formParamsOf`).
        const pointer = `${operationPointer(operation)}/requestBody/content/application~1x-www-form-urlencoded/schema`
        const errors = errorsOf(validatorAt(pointer), formParamsOf(draft.body.value))
        if (errors.length > 0) violations.push(`body: ${errors.join("; ")}`)
      } else if (draft.body.kind === "json") {
        const errors = errorsOf(validatorAt(`${operationPointer(operation)}/requestBody/content/application~1json/schema`), draft.body.value)
        if (errors.length > 0) violations.push(`body: ${errors.join("; ")}`)
      }
    }
    return violations
  }

  return { responseErrors, requestViolations }
}
