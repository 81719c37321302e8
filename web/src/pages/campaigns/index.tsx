import { Route, Routes } from "react-router";
import { CampaignEditor } from "./CampaignEditor.tsx";
import { CampaignList } from "./CampaignList.tsx";

/** The Campaigns tab (every member reads; Mail administrators write, test, schedule, pause, resume and cancel): /admin/campaigns, /new and /:campaignId. */
export default function CampaignsPage() {
  return (
    <Routes>
      <Route index element={<CampaignList />} />
      <Route path="new" element={<CampaignEditor />} />
      <Route path=":campaignId" element={<CampaignEditor />} />
    </Routes>
  );
}
