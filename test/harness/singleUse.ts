/**
 * Which operations have a uniqueness or single-use rule: the same request sent many times at once
 * must succeed exactly once (race mode). An endpoint declares it with `singleUse` in its
 * `operationDocs` (src/Api/Docs.ts), published as the `x-single-use` extension the harness reads.
 */
import type { Operation } from "./document.js"

/** The operation's rule; undefined when it has none. */
export const singleUseOf = (operation: Operation): string | undefined => operation.singleUse
