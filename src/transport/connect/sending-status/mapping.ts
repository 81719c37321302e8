import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  percentOf,
  type SendingStatus,
  type SendingStatusQuery,
  type SuspensionReason as DomainReason,
  type WindowFigures,
} from "../../../capabilities/deliverability/index.ts";
import { type GetSendingStatusResponseSchema, type SendingWindowSchema, SuspensionReason } from "../../../gen/mail/v1/sending_status_pb.js";
import { callerOf } from "../context.ts";

/** The SendingStatusService's proto <-> domain mapping, both directions; the company is the caller's. */

const REASON: Record<DomainReason, SuspensionReason> = {
  bounce_rate: SuspensionReason.BOUNCE_RATE,
  complaint_rate: SuspensionReason.COMPLAINT_RATE,
};

export function sendingStatusQuery(ctx: HandlerContext): SendingStatusQuery {
  return { companyId: callerOf(ctx).companyId };
}

function windowMessage(figures: WindowFigures, from: Date): MessageInitShape<typeof SendingWindowSchema> {
  return {
    from: timestampFromDate(from),
    sends: BigInt(figures.sends),
    bounces: BigInt(figures.bounces),
    complaints: BigInt(figures.complaints),
    bounceRate: percentOf(figures.bounces, figures.sends),
    complaintRate: percentOf(figures.complaints, figures.sends),
  };
}

export function sendingStatusResponse(status: SendingStatus): MessageInitShape<typeof GetSendingStatusResponseSchema> {
  const { suspension, window, limits } = status;
  return {
    maySend: suspension === undefined,
    ...(suspension
      ? {
          suspension: {
            suspendedAt: timestampFromDate(suspension.suspendedAt),
            reason: REASON[suspension.reason],
            window: windowMessage(suspension, suspension.windowFrom),
          },
        }
      : {}),
    window: windowMessage(window, window.from),
    limits: { bouncePercent: limits.bouncePercent, complaintPercent: limits.complaintPercent, minSends: BigInt(limits.minSends) },
    ...(status.liftedAt ? { liftedAt: timestampFromDate(status.liftedAt) } : {}),
  };
}
