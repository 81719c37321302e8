import type { ServiceImpl } from "@connectrpc/connect";
import type { SendingGuard } from "../../../capabilities/deliverability/index.ts";
import type { SendingStatusService } from "../../../gen/mail/v1/sending_status_pb.js";
import { sendingStatusQuery, sendingStatusResponse } from "./mapping.ts";

/** SendingStatusService: the company reads whether it may send, and why not (API keys, member sessions, operators acting for it). */
export function sendingStatusServiceImpl(guard: SendingGuard): ServiceImpl<typeof SendingStatusService> {
  return {
    async getSendingStatus(_req, ctx) {
      return sendingStatusResponse(await guard.status(sendingStatusQuery(ctx)));
    },
  };
}
