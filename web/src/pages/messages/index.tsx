import { Route, Routes } from "react-router";
import { MessageLog } from "./MessageLog.tsx";
import { MessagePage } from "./MessagePage.tsx";

/** The Messages tab (every member): /admin/messages?status=&q=&tag=&since= and /admin/messages/:id. */
export default function MessagesPage() {
  return (
    <Routes>
      <Route index element={<MessageLog />} />
      <Route path=":id" element={<MessagePage />} />
    </Routes>
  );
}
