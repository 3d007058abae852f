/** The questionnaire jobs; registered by the area (`src/Layers/Http/Questionnaires/index.ts`). */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { QuestionnaireMail } from "./QuestionnaireMail.js"

export const questionnaireAlertTask = defineTask({
  name: "questionnaires.alert_mail",
  payload: Schema.Struct({ alert_id: Schema.Int }),
  run: (payload) => Effect.flatMap(QuestionnaireMail, (mail) => mail.alert(payload.alert_id))
})

/** The token rides in the job until the mail is sent (the table keeps only its hash). */
export const questionnaireInviteTask = defineTask({
  name: "questionnaires.invite_mail",
  payload: Schema.Struct({ invite_id: Schema.Int, token: Schema.String }),
  run: (payload) => Effect.flatMap(QuestionnaireMail, (mail) => mail.invite(payload.invite_id, payload.token))
})

export const screenerResultTask = defineTask({
  name: "questionnaires.screener_result_mail",
  payload: Schema.Struct({ marketing_questionnaire_id: Schema.Int }),
  run: (payload) => Effect.flatMap(QuestionnaireMail, (mail) => mail.screenerResult(payload.marketing_questionnaire_id))
})

/** Daily: public screeners older than 180 days are deleted. */
export const purgeScreenersTask = defineTask({
  name: "questionnaires.purge_screeners",
  payload: Schema.Struct({}),
  run: () => Effect.asVoid(Effect.flatMap(QuestionnaireMail, (mail) => mail.purgeScreeners))
})

export const questionnaireTasks = [questionnaireAlertTask, questionnaireInviteTask, screenerResultTask, purgeScreenersTask] as const
