import type { ServiceImpl } from "@connectrpc/connect";
import type { Conversions } from "../../../capabilities/conversions/index.ts";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import { recordConversionCommand, toRecordConversionResponse } from "./conversions-to-proto.ts";

export type ConversionRpcs = Pick<ServiceImpl<typeof MailService>, "recordConversion">;

/**
 * RecordConversion (POST /mail/v1/conversions, 202): the caller's company
 * records the conversion; the answer is the conversion and the outcome
 * (`recorded`, `adjusted` or `duplicate`).
 */
export function conversionRpcs(conversions: Pick<Conversions, "record">): ConversionRpcs {
  return {
    async recordConversion(req, ctx) {
      return toRecordConversionResponse(await conversions.record(recordConversionCommand(callerOf(ctx).companyId, req)));
    },
  };
}
