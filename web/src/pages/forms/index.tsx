import { Route, Routes } from "react-router";
import { FormList } from "./FormList.tsx";
import { FormPage } from "./FormPage.tsx";

/** The Forms tab (every member reads): /admin/forms and /admin/forms/:publicId. */
export default function FormsPage() {
  return (
    <Routes>
      <Route index element={<FormList />} />
      <Route path=":publicId" element={<FormPage />} />
    </Routes>
  );
}
