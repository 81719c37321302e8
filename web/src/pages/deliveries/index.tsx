import { Route, Routes } from "react-router";
import { DeliveryList } from "./DeliveryList.tsx";
import { DeliveryPage } from "./DeliveryPage.tsx";

/** The Deliveries tab (Mail administrators): /admin/deliveries and /admin/deliveries/:id. */
export default function DeliveriesPage() {
  return (
    <Routes>
      <Route index element={<DeliveryList />} />
      <Route path=":id" element={<DeliveryPage />} />
    </Routes>
  );
}
