export {
  type AddSuppressionCommand,
  type AddSuppressionResult,
  type ListSuppressionsCommand,
  type RemoveSuppressionCommand,
  type SuppressCommand,
  SUPPRESSION_CURSOR,
  SUPPRESSION_REASONS,
  type SuppressionQuery,
  Suppressions,
  type SuppressionsDependencies,
} from "./suppressions.ts";
export type { NewSuppression, SuppressionEntry, SuppressionFilters, SuppressionReason, SuppressionsStore } from "./ports.ts";
export { suppressionKey } from "./normalize.ts";
