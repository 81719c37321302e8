import { useQuery } from "@connectrpc/connect-query";
import { CreditsService } from "@gen/mail/v1/credits_pb.js";
import { Link } from "react-router";
import { formatNumber } from "../../app/format.tsx";

/** The company's balance, read once for the header, the banner and the Credits page (GetCredits), and kept fresh. */
export function useCredits() {
  return useQuery(CreditsService.method.getCredits, {}, { staleTime: 30_000, refetchInterval: 60_000 });
}

/** The balance in the screen's header: a link to the Credits page, marked when low. */
export function HeaderBalance() {
  const { data } = useCredits();
  if (!data) return null;
  const balance = formatNumber(data.balance);
  return (
    <Link to="/credits" className={data.low ? "badge badge-bad" : "badge"} aria-label={`Credits: ${balance} left${data.low ? ", low" : ""}`}>
      Credits: {balance}
    </Link>
  );
}

/** On every page while the balance is below the low-balance mark. */
export function LowCreditsBanner() {
  const { data } = useCredits();
  if (!data?.low) return null;
  return (
    <p className="warning">
      <strong>Your Mail credits are low: {formatNumber(data.balance)} left</strong> (below {formatNumber(data.lowBalanceThreshold)}). When they run out, new
      sends are refused. <Link to="/credits">See the balance and the ledger</Link>.
    </p>
  );
}
