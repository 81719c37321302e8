import type { Conversions } from "../../../capabilities/conversions/index.ts";

export { conversionRpcs, type ConversionRpcs } from "./conversion-rpcs.ts";
export { reportsServiceImpl } from "./reports-service.ts";

/** What the MailService's RecordConversion calls (src/transport/connect/mail). */
export type ConversionRecorder = Pick<Conversions, "record">;
