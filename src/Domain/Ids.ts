import { Schema } from "effect"

/** Identifiers are positive integers (ECM §conventions); branded so they cannot be mixed up. */
const positiveId = <const B extends string>(brand: B) =>
  Schema.Int.pipe(
    Schema.positive(),
    Schema.lessThanOrEqualTo(2_147_483_647),
    Schema.brand(brand),
    Schema.annotations({ message: () => "is invalid", identifier: brand })
  )

export const UserId = positiveId("UserId")
export type UserId = typeof UserId.Type
