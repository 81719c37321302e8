import { Route, Routes } from "react-router";
import { EndpointList } from "./EndpointList.tsx";
import { EndpointPage } from "./EndpointPage.tsx";

/** The Webhooks tab (Mail administrators): /admin/webhooks and /admin/webhooks/:id. */
export default function WebhooksPage() {
  return (
    <Routes>
      <Route index element={<EndpointList />} />
      <Route path=":id" element={<EndpointPage />} />
    </Routes>
  );
}
