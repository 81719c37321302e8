import { useQuery } from "@connectrpc/connect-query";
import { SendingStatusService, SuspensionReason } from "@gen/mail/v1/sending_status_pb.js";
import { Link } from "react-router";
import { DateTime, formatNumber } from "../../app/format.tsx";

/** Whether the company may send (GetSendingStatus), kept fresh. */
export function useSendingStatus() {
  return useQuery(SendingStatusService.method.getSendingStatus, {}, { staleTime: 30_000, refetchInterval: 60_000 });
}

/** A rate as the screen shows it: at most two decimals, with a percent sign. */
function percent(value: number): string {
  return `${formatNumber(value, { maximumFractionDigits: 2 })} %`;
}

/**
 * On every page while the deliverability guard has suspended the company's
 * sending: why, with the numbers that crossed the line and the limit, and
 * what happens to sends meanwhile.
 */
export function SendingSuspendedBanner() {
  const { data } = useSendingStatus();
  const suspension = data?.suspension;
  if (!data || data.maySend || !suspension) return null;
  const window = suspension.window;
  const limits = data.limits;
  const sends = formatNumber(window?.sends ?? 0n);
  const why =
    suspension.reason === SuspensionReason.COMPLAINT_RATE
      ? `${formatNumber(window?.complaints ?? 0n)} of the last ${sends} emails drew a spam complaint: ${percent(window?.complaintRate ?? 0)}, above the limit of ${percent(limits?.complaintPercent ?? 0)}.`
      : `${formatNumber(window?.bounces ?? 0n)} of the last ${sends} emails bounced: ${percent(window?.bounceRate ?? 0)}, above the limit of ${percent(limits?.bouncePercent ?? 0)}.`;
  return (
    <div className="warning" role="status" aria-label="Sending is suspended">
      <p>
        <strong>Sending is suspended</strong> since{" "}
        <DateTime value={suspension.suspendedAt} />. {why}
      </p>
      <p>
        New sends are still accepted, but each message fails with SENDING_SUSPENDED and its credit is returned. Check where the addresses come from (see{" "}
        <Link to="/suppressions?reason=bounce">the bounced addresses</Link>), then ask your Mail provider to lift the suspension.
      </p>
    </div>
  );
}
