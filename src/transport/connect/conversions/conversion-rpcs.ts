import type { ServiceImpl } from "@connectrpc/connect";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { type ConversionRecorder, recordConversionRpc } from "./record-conversion.ts";

export type ConversionRpcs = Pick<ServiceImpl<typeof MailService>, "recordConversion">;

/** RecordConversion (POST /mail/v1/conversions) on the conversions capability. */
export function conversionRpcs(conversions: ConversionRecorder): ConversionRpcs {
  return { recordConversion: recordConversionRpc(conversions) };
}
