import { Route, Routes } from "react-router";
import { ContactList } from "./ContactList.tsx";
import { ContactPage } from "./ContactPage.tsx";

/** The Contacts tab (every member): /admin/contacts?status=&listId=&tag=&q= and /admin/contacts/:id. */
export default function ContactsPage() {
  return (
    <Routes>
      <Route index element={<ContactList />} />
      <Route path=":id" element={<ContactPage />} />
    </Routes>
  );
}
