/**
 * What Temporal records and bills per workflow, read from the histories of
 * workflows the run made: history events, billable actions, and history
 * bytes (the encoded History, what the server stores).
 *
 * Billable actions follow Temporal Cloud's published rules
 * (docs.temporal.io/cloud/actions), as far as a history shows them: a
 * workflow start, each activity attempt, each timer, each signal, each
 * search-attribute upsert except one that sets only `TemporalChangeVersion`
 * (the versioning attribute `patched()` writes, which is exempt), and the
 * markers of one workflow task (local activities, patch markers) as one
 * action whatever their number.
 */
import type { Client, WorkflowHandle } from "@temporalio/client";
import proto from "@temporalio/proto";

// A CommonJS module: its namespaces are properties of the default export.
const { temporal } = proto;

export interface TemporalCost {
  /** Workflows read. */
  readonly workflows: number;
  /** Averages per workflow. */
  readonly events: number;
  readonly actions: number;
  readonly bytes: number;
  /** Billable actions per workflow, by kind. */
  readonly byKind: Readonly<Record<string, number>>;
}

type History = Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>;
type HistoryEvent = NonNullable<History["events"]>[number];

/** The search attribute patched() maintains; Temporal Cloud does not bill its upserts. */
const CHANGE_VERSION = "TemporalChangeVersion";

const KIND_OF: ReadonlyArray<[keyof HistoryEvent, string]> = [
  ["workflowExecutionStartedEventAttributes", "start"],
  ["timerStartedEventAttributes", "timer"],
  ["workflowExecutionSignaledEventAttributes", "signal"],
];

/** Billable actions in one history, by kind. */
export function billableActions(history: History): Record<string, number> {
  const byKind: Record<string, number> = {};
  const add = (kind: string, count = 1): void => {
    byKind[kind] = (byKind[kind] ?? 0) + count;
  };
  const tasksWithMarkers = new Set<string>();
  for (const event of history.events ?? []) {
    for (const [field, kind] of KIND_OF) if (event[field]) add(kind);
    const marker = event.markerRecordedEventAttributes;
    if (marker) tasksWithMarkers.add(String(marker.workflowTaskCompletedEventId ?? event.eventId));
    const upsert = event.upsertWorkflowSearchAttributesEventAttributes;
    if (upsert && Object.keys(upsert.searchAttributes?.indexedFields ?? {}).some((name) => name !== CHANGE_VERSION)) add("upsert");
    // Each attempt of an activity is billed; the history keeps the last attempt's number.
    const started = event.activityTaskStartedEventAttributes;
    if (started) add("activity", started.attempt ?? 1);
  }
  if (tasksWithMarkers.size > 0) add("markers", tasksWithMarkers.size);
  return byKind;
}

/** A workflow by id (its latest run), or one run of it (a workflow that continued as new has several). */
export type WorkflowRun = string | { readonly workflowId: string; readonly runId: string };

export async function temporalCost(client: Client, workflowIds: readonly WorkflowRun[]): Promise<TemporalCost> {
  const byKind: Record<string, number> = {};
  let events = 0;
  let bytes = 0;
  for (const run of workflowIds) {
    const handle = typeof run === "string" ? client.workflow.getHandle(run) : client.workflow.getHandle(run.workflowId, run.runId);
    const history = await handle.fetchHistory();
    const list = history.events ?? [];
    events += list.length;
    bytes += temporal.api.history.v1.History.encode(history).finish().length;
    for (const [kind, count] of Object.entries(billableActions(history))) byKind[kind] = (byKind[kind] ?? 0) + count;
  }
  const n = Math.max(workflowIds.length, 1);
  const perWorkflow = Object.fromEntries(Object.entries(byKind).map(([kind, count]) => [kind, count / n]));
  const actions = Object.values(byKind).reduce((sum, count) => sum + count, 0) / n;
  return { workflows: workflowIds.length, events: events / n, actions, bytes: bytes / n, byKind: perWorkflow };
}

/** Workflows still running that match `query` (visibility), e.g. `WorkflowType = "messageLifecycle"`. */
export async function openWorkflows(client: Client, query: string): Promise<number> {
  const { count } = await client.workflow.count(`${query} AND ExecutionStatus = "Running"`);
  return count;
}

/** Workflow ids of up to `limit` closed workflows matching `query` (for the baselines, whose ids live in another process). */
export async function someWorkflowIds(client: Client, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) {
    ids.push(execution.workflowId);
    if (ids.length >= limit) break;
  }
  return ids;
}

export function describeCost(cost: TemporalCost): string {
  const kinds = Object.entries(cost.byKind)
    .map(([kind, count]) => `${kind} ${Number(count.toFixed(2))}`)
    .join(", ");
  return `${cost.events.toFixed(1)} history events, ${cost.actions.toFixed(2)} billable actions (${kinds}), ${Math.round(cost.bytes)} history bytes`;
}
