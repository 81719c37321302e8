import type { ServiceImpl } from "@connectrpc/connect";
import type { ConversionInput, RecordedConversion } from "../../../capabilities/conversions/index.ts";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import { conversionInputFromProto, outcomeToProto, toConversionProto } from "./conversions-to-proto.ts";

/** What RecordConversion calls: ConversionsService (src/capabilities/conversions) fits. */
export interface ConversionRecorder {
  record(companyId: string, input: ConversionInput): Promise<RecordedConversion>;
}

/**
 * RecordConversion (POST /mail/v1/conversions, 202): the caller's company
 * records the conversion; the answer is the conversion and the outcome
 * (`recorded`, `adjusted` or `duplicate`).
 */
export function recordConversionRpc(conversions: ConversionRecorder): ServiceImpl<typeof MailService>["recordConversion"] {
  return async (req, ctx) => {
    const { conversion, outcome } = await conversions.record(callerOf(ctx).companyId, conversionInputFromProto(req));
    return { conversion: toConversionProto(conversion), outcome: outcomeToProto(outcome) };
  };
}
