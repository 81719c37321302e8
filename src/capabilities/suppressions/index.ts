export { SUPPRESSION_REASONS, SuppressionsService, type SuppressionsServiceOptions } from "./suppressions-service.ts";
export type { NewSuppression, SuppressionEntry, SuppressionReason, SuppressionsStore } from "./ports.ts";
export { suppressionKey } from "./normalize.ts";
