// The empty-workflow baseline's workflow: one empty activity, nothing else.
// What any workflow of the service costs the Temporal server and a worker
// at the least (bench/baselines/empty-workflow.ts).
import { proxyActivities } from "@temporalio/workflow";

interface EmptyActivities {
  emptyActivity(): Promise<void>;
}

const { emptyActivity } = proxyActivities<EmptyActivities>({ startToCloseTimeout: "1 minute" });

export async function emptyWorkflow(): Promise<void> {
  await emptyActivity();
}
