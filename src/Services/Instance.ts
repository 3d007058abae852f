/** This process among the instances sharing the database (`src/Layers/Instance.ts`). */
import { Context } from "effect"

export interface InstanceShape {
  /** Random per start; recorded on the work this instance runs outside the job queue (imports). */
  readonly id: string
}

export class Instance extends Context.Tag("app/Instance")<Instance, InstanceShape>() {}
