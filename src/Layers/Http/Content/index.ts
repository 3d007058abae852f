/** Content library: the library, import/export and files, assignments, recommendations and the demo library. */
import { Layer } from "effect"
import { Assignees } from "../../../Services/Content/Assignees.js"
import { ContentFiles } from "../../../Services/Content/ContentFiles.js"
import { ContentImport } from "../../../Services/Content/ContentImport.js"
import { loadDemoContent } from "../../../Services/Content/DemoContent.js"
import { ContentLibrary } from "../../../Services/Content/ContentLibrary.js"
import { Recommendations, refreshContentStats } from "../../../Services/Content/Recommendations.js"
import { UserCollections } from "../../../Services/Content/UserCollections.js"
import { UserPieces } from "../../../Services/Content/UserPieces.js"
import { defineArea } from "../../Area.js"
import { HttpContentLive } from "./Content.js"

/** The demo library, loaded at start-up into an empty library unless CONTENT_DEMO=false. */
const DemoContentLive = Layer.effectDiscard(loadDemoContent).pipe(Layer.provide(ContentImport.Default))

export const ContentArea = defineArea({
  handlers: Layer.mergeAll(...HttpContentLive),
  services: Layer.mergeAll(
    ContentLibrary.Default, ContentImport.Default, ContentFiles.Default, UserPieces.Default, UserCollections.Default,
    Recommendations.Default, DemoContentLive
  ).pipe(Layer.provide(Assignees.Default)),
  tasks: [refreshContentStats],
  // Popularity figures for recommendations, nightly in the Americas.
  schedules: [{ task: refreshContentStats, pattern: "47 9 * * *" }]
})
