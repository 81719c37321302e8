import { CampaignState } from "@gen/mail/v1/campaigns_pb.js";

const STATES: Record<CampaignState, { label: string; className: string }> = {
  [CampaignState.UNSPECIFIED]: { label: "unknown", className: "badge" },
  [CampaignState.DRAFT]: { label: "draft", className: "badge" },
  [CampaignState.SCHEDULED]: { label: "scheduled", className: "badge" },
  [CampaignState.SENDING]: { label: "sending", className: "badge badge-ok" },
  [CampaignState.PAUSED]: { label: "paused", className: "badge badge-bad" },
  [CampaignState.SENT]: { label: "sent", className: "badge badge-ok" },
  [CampaignState.CANCELLED]: { label: "cancelled", className: "badge" },
};

/** A campaign's state as a badge. */
export function CampaignStateBadge({ state }: { state: CampaignState }) {
  const shown = STATES[state];
  return <span className={shown.className}>{shown.label}</span>;
}

/** States in which the campaign still moves on its own: the page refetches while in them. */
export function isLive(state: CampaignState): boolean {
  return state === CampaignState.SCHEDULED || state === CampaignState.SENDING;
}
