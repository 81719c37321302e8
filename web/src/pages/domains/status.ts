import { DomainStatus } from "@gen/mail/v1/domains_pb.js";

/** Each domain status as the screen names and explains it (the Domains page, the overview). */
export const STATUS: Record<DomainStatus, { label: string; className: string; hint: string }> = {
  [DomainStatus.UNSPECIFIED]: { label: "unknown", className: "badge", hint: "" },
  [DomainStatus.PENDING]: { label: "pending", className: "badge", hint: "Publish the records below; the service checks them every few minutes for 72 hours." },
  [DomainStatus.VERIFIED]: { label: "verified", className: "badge badge-ok", hint: "Its senders send. The service checks the records daily." },
  [DomainStatus.DEGRADED]: {
    label: "degraded",
    className: "badge badge-bad",
    hint: "A record has gone missing or changed since it was verified. Mail still goes out, but receivers may refuse it: publish the record again.",
  },
};

