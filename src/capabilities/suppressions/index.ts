export {
  type SuppressCommand,
  SUPPRESSION_REASONS,
  type SuppressionQuery,
  Suppressions,
  type SuppressionsDependencies,
} from "./suppressions.ts";
export type { NewSuppression, SuppressionEntry, SuppressionReason, SuppressionsStore } from "./ports.ts";
export { suppressionKey } from "./normalize.ts";
