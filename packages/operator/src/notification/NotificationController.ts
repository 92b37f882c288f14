/**
 * The notification controller: NotificationRequests in the controller namespace through the lifecycle's controller
 * machinery (watch + resync, work queue, `requeueAfter` for the next attempt). Storage, when present, receives the
 * delivery records.
 */
import { whenLeading } from "@kubemend/core/LeaderElection"
import { Effect, Layer, Option } from "effect"
import { keyOf } from "../runtime/Workers.ts"
import { runController } from "../runtime/Builder.ts"
import { Breakers } from "./Breakers.ts"
import { NotificationConfig } from "./NotificationConfig.ts"
import { NotificationMetrics } from "./NotificationMetrics.ts"
import { NotificationReconciler } from "./NotificationReconciler.ts"

export const runNotificationController = Effect.gen(function* () {
  const config = yield* NotificationConfig
  if (!config.enabled) return yield* Effect.logInfo("notification controller disabled (notification.enabled=false)")
  const reconciler = yield* NotificationReconciler
  yield* runController({
    name: "notification",
    primary: "notificationrequests",
    sources: [{ plural: "notificationrequests", keyFor: (o) => Option.some(keyOf(o.metadata.namespace, o.metadata.name)) }],
    reconcile: reconciler.reconcile
  })
})

/** For the layer's scope; needs K8s, Cluster, Metrics, ControllerMetrics, LifecycleConfig and NotificationConfig (Storage optional). */
export const NotificationControllerLive = Layer.scopedDiscard(whenLeading(runNotificationController)).pipe(
  Layer.provide(NotificationReconciler.Default.pipe(Layer.provideMerge(Breakers.Default), Layer.provideMerge(NotificationMetrics.Default)))
)
