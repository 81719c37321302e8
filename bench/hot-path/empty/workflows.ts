import { proxyActivities } from "@temporalio/workflow";
import type { EmptyActivities } from "./activities.ts";

/** The baseline of the end-to-end bench: one workflow that runs one activity that does nothing. */
export async function emptyWorkflow(): Promise<void> {
  const { nothing } = proxyActivities<EmptyActivities>({ startToCloseTimeout: "30s" });
  await nothing();
}
