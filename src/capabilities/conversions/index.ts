export {
  CONTACT_CONVERSIONS_CURSOR,
  Conversions,
  type ConversionsDependencies,
  type ListContactConversionsCommand,
  type RecordClickCommand,
  type RecordClickResult,
  type RecordConversionCommand,
  type RevenueByCampaignCommand,
} from "./conversions.ts";
export { ATTRIBUTION_WINDOW_DAYS, attributionWindow } from "./attribution.ts";
export { type Amount, amountFromDatabase, amountToDatabase, formatAmount, MAX_AMOUNT, parseAmount } from "./amounts.ts";
export { type CampaignClick, type ValidClick, validateClick } from "./clicks.ts";
export { type FirstWrite, firstWrite, type LaterWrite, laterWrite } from "./decide-write.ts";
export type { ClickLedger, ContactDirectory, ConversionFilter, ConversionStore, ConversionWrite, NewConversion } from "./ports.ts";
export * from "./types.ts";
export { CONVERSION_LIMITS, type ConversionInput, DEFAULT_CURRENCY, type ValidConversion, validateConversion } from "./validate-conversion.ts";
export { type ConversionEventDraft, conversionEvent, conversionJson, netRevenue } from "./view.ts";
