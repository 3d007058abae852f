/** Questionnaires: the catalogue (seeded at start-up), responses, invites, public screeners and alerts. */
import { Effect, Layer } from "effect"
import { QuestionnaireAlerts } from "../../../Services/Questionnaires/QuestionnaireAlerts.js"
import { Catalogue } from "../../../Services/Questionnaires/Catalogue.js"
import { QuestionnaireInvites } from "../../../Services/Questionnaires/QuestionnaireInvites.js"
import { QuestionnaireMail } from "../../../Services/Questionnaires/QuestionnaireMail.js"
import { QuestionnaireResponses } from "../../../Services/Questionnaires/QuestionnaireResponses.js"
import { Screeners } from "../../../Services/Questionnaires/Screeners.js"
import { purgeScreenersTask, questionnaireTasks } from "../../../Services/Questionnaires/Tasks.js"
import { defineArea } from "../../Area.js"
import { HttpQuestionnairesAreaLive } from "./Questionnaires.js"

/** Instruments from seeds/questionnaires: a changed file becomes the next version before any request is served. */
const QuestionnaireSeedLive = Layer.effectDiscard(Effect.flatMap(Catalogue, (catalogue) => catalogue.seed())).pipe(
  Layer.provide(Catalogue.Default)
)

export const QuestionnairesArea = defineArea({
  handlers: Layer.mergeAll(...HttpQuestionnairesAreaLive),
  services: Layer.mergeAll(
    Catalogue.Default, QuestionnaireResponses.Default, QuestionnaireInvites.Default, Screeners.Default, QuestionnaireAlerts.Default,
    QuestionnaireMail.Default, QuestionnaireSeedLive
  ),
  tasks: questionnaireTasks,
  // Public screeners older than 180 days, nightly.
  schedules: [{ task: purgeScreenersTask, pattern: "35 9 * * *" }]
})
