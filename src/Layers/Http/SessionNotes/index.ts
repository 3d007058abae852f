/** Session notes: notes, addenda, sign-offs, supervision and their PDFs. */
import { Layer } from "effect"
import { NotePdfs } from "../../../Services/SessionNotes/NotePdfs.js"
import { SessionNoteReviews } from "../../../Services/SessionNotes/SessionNoteReviews.js"
import { SessionNotes } from "../../../Services/SessionNotes/SessionNotes.js"
import { SupervisedAppointments } from "../../../Services/SessionNotes/SupervisedAppointments.js"
import { defineArea } from "../../Area.js"
import { HttpSessionNotesAreaLive } from "./SessionNotes.js"

export const SessionNotesArea = defineArea({
  handlers: HttpSessionNotesAreaLive,
  services: Layer.mergeAll(SessionNotes.Default, SessionNoteReviews.Default, NotePdfs.Default, SupervisedAppointments.Default)
})
