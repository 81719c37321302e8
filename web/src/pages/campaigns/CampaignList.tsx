import { type Campaign, CampaignsService } from "@gen/mail/v1/campaigns_pb.js";
import { Link } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { CampaignStateBadge } from "./states.tsx";

const COLUMNS: readonly Column<Campaign>[] = [
  titleLink("Name", (campaign) => campaign.name),
  { header: "State", cell: (campaign) => <CampaignStateBadge state={campaign.state} /> },
  { header: "Send time", cell: (campaign) => <DateTime value={campaign.finishedAt ?? campaign.sendAt} empty="not scheduled" /> },
  {
    header: "Accepted",
    cell: (campaign) => `${formatNumber(campaign.counters?.accepted ?? 0)} / ${formatNumber(campaign.counters?.audience ?? 0)}`,
  },
  {
    header: "Failed, suppressed, skipped",
    wide: true,
    cell: (campaign) =>
      `${formatNumber(campaign.counters?.failed ?? 0)}, ${formatNumber(campaign.counters?.suppressed ?? 0)}, ${formatNumber(campaign.counters?.skipped ?? 0)}`,
  },
];

/** The Campaigns tab's list: /admin/campaigns. */
export function CampaignList() {
  const { isAdmin } = useSession();
  const list = usePagedList(CampaignsService.method.listCampaigns, {}, { refetchInterval: 5000 });
  return (
    <Page
      title="Campaigns"
      actions={
        isAdmin ? (
          <Link className="button button-primary" to="new">
            New campaign
          </Link>
        ) : undefined
      }
    >
      <p className="hint">A campaign mails the subscribed contacts of one or more lists, each once. Open one to edit its draft, send yourself a test, schedule it and follow its results.</p>
      <ListView list={list} label="Table of campaigns" noun="campaigns" columns={COLUMNS} empty="No campaign yet." />
    </Page>
  );
}
