/** Span helpers for service methods written with `Effect.fn`. */
import { Effect } from "effect"

/**
 * A method's span attributes, set from its arguments by its last pipeable. When a method's
 * transaction is one of its pipeables the body runs under the `sql.transaction` span, where
 * `annotateCurrentSpan` would label the transaction; this runs outside it, in the method's span:
 *
 *     Effect.fn("Notes.delete")(function*(viewer: Viewer, id: number) { … },
 *       transaction, annotatedOutside((_viewer: Viewer, id: number) => ({ "note.id": id })))
 */
export const annotatedOutside = <Args extends ReadonlyArray<unknown>>(attributes: (...args: Args) => Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>, ...args: Args): Effect.Effect<A, E, R> =>
    Effect.zipRight(Effect.annotateCurrentSpan(attributes(...args)), effect)

/** What a method's body returns when some span attributes come from what it did, not its arguments. */
export interface Annotated<A> {
  readonly value: A
  readonly spanAttributes: Record<string, unknown>
}

/**
 * The last pipeable of a method whose body returns `Annotated`: sets the attributes on the
 * method's span, outside its transaction (see `annotatedOutside`), and gives the value.
 */
export const annotatedFromResult = <A, E, R>(effect: Effect.Effect<Annotated<A>, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(effect, ({ spanAttributes, value }) => Effect.as(Effect.annotateCurrentSpan(spanAttributes), value))

/** The trace id of the current span (audit rows and logs carry it), or null outside any span. */
export const currentTraceId: Effect.Effect<string | null> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) => span._tag === "Some" ? span.value.traceId : null
)
