/**
 * Keeps a long report's garbage from piling up. A report file streams hundreds of megabytes of
 * text through the heap; rows that outlive a young-generation collection are promoted, and V8
 * lets the old generation grow to a multiple of the app's live heap before collecting it: a
 * million-row report took the process from ~150 MB to ~330 MB. Asking for a full collection each
 * time the heap has grown by `slackBytes` held the same reports at ~200–260 MB, at no measurable
 * cost in total time (bench/reports.ts). The price: each collection is a full, atomic one, which
 * pauses the event loop ~0.1 s (a ~57 MB live heap on the 2-core bench machine) every second or
 * two while a large report is written, where V8's own incremental collections pause it ~20 ms.
 *
 * The collector comes from a context created while `--expose-gc` is set, the flag then cleared
 * (as Jest does for `--logHeapUsage`): no command-line flag, and no `gc` global for other code.
 */
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

let collector: (() => void) | undefined

const fullCollection = () => {
  if (collector === undefined) {
    setFlagsFromString("--expose-gc")
    collector = runInNewContext("gc") as () => void
    setFlagsFromString("--no-expose-gc")
  }
  collector()
}

const heapUsed = () => getHeapStatistics().used_heap_size

/** Growth of the heap allowed between collections: a few seconds of a report's rows. */
export const defaultSlackBytes = 48 * 1024 * 1024

/**
 * A check to call between batches: collects when the heap has grown by `slackBytes` since the
 * keeper was made or last collected; whether it collected.
 */
export const heapKeeper = (slackBytes: number = defaultSlackBytes): () => boolean => {
  let floor = heapUsed()
  return () => {
    if (heapUsed() - floor < slackBytes) return false
    fullCollection()
    floor = heapUsed()
    return true
  }
}
