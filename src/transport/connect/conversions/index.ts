export { conversionRpcs, type ConversionRpcs } from "./conversion-rpcs.ts";
export { type ConversionRecorder, recordConversionRpc } from "./record-conversion.ts";
export { conversionInputFromProto, toConversionProto } from "./conversions-to-proto.ts";
export { reportsServiceImpl } from "./reports-service.ts";
export { type RevenueReport, revenueFilterOf, toCampaignRevenueProto } from "./revenue-to-proto.ts";
