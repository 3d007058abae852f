/**
 * One area of the service as `Main.ts` wires it (ARCHITECTURE "Layout"): the handlers of its API
 * groups, the services they and its jobs use (with what they need from each other inside the area
 * provided), the job tasks the worker runs for it and their recurring schedules. Each area folder
 * of `src/Layers/Http` exports one from its `index.ts`; cross-area services (audit log, access,
 * authentication) and the platform (database, adapters, queue) are provided by `Main.ts`.
 */
import { Layer } from "effect"
import type { AnyJobTask } from "../Services/Jobs.js"
import type { JobSchedule } from "./Jobs.js"

export interface Area<H, HR, S, SE, SR, TR> {
  readonly handlers: Layer.Layer<H, never, HR>
  readonly services: Layer.Layer<S, SE, SR>
  readonly tasks: ReadonlyArray<AnyJobTask<TR>>
  readonly schedules: ReadonlyArray<JobSchedule>
}

/** An area; its types stay exact, so `Main.ts` is checked for everything each area needs. */
export const defineArea = <H, HR, S, SE, SR, const T extends ReadonlyArray<AnyJobTask> = readonly []>(area: {
  readonly handlers: Layer.Layer<H, never, HR>
  readonly services: Layer.Layer<S, SE, SR>
  readonly tasks?: T
  readonly schedules?: ReadonlyArray<JobSchedule>
}): Area<H, HR, S, SE, SR, TaskNeeds<T[number]>> => ({ tasks: [], schedules: [], ...area })

type TaskNeeds<T> = T extends AnyJobTask<infer R> ? R : never

type AnyArea = Area<any, any, any, any, any, any>
type HandlersOut<T> = T extends Area<infer H, any, any, any, any, any> ? H : never
type HandlersIn<T> = T extends Area<any, infer R, any, any, any, any> ? R : never
type ServicesOut<T> = T extends Area<any, any, infer S, any, any, any> ? S : never
type ServicesError<T> = T extends Area<any, any, any, infer E, any, any> ? E : never
type ServicesIn<T> = T extends Area<any, any, any, any, infer R, any> ? R : never
type TasksIn<T> = T extends Area<any, any, any, any, any, infer R> ? R : never

/** The areas as one: all handlers, all services (each built once), every task and schedule. */
export const combineAreas = <const A extends readonly [AnyArea, ...Array<AnyArea>]>(areas: A): Area<
  HandlersOut<A[number]>, HandlersIn<A[number]>, ServicesOut<A[number]>, ServicesError<A[number]>, ServicesIn<A[number]>, TasksIn<A[number]>
> => ({
  handlers: Layer.mergeAll(...(areas.map((area) => area.handlers) as [AnyArea["handlers"]])),
  services: Layer.mergeAll(...(areas.map((area) => area.services) as [AnyArea["services"]])),
  tasks: areas.flatMap((area) => area.tasks),
  schedules: areas.flatMap((area) => area.schedules)
})
