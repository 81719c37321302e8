import { Route, Routes } from "react-router";
import { TemplateEditor } from "./TemplateEditor.tsx";
import { TemplateList } from "./TemplateList.tsx";

/** The Templates tab (every member reads and previews; Mail administrators change): /admin/templates, /admin/templates/new and /admin/templates/:templateId. */
export default function TemplatesPage() {
  return (
    <Routes>
      <Route index element={<TemplateList />} />
      <Route path="new" element={<TemplateEditor />} />
      <Route path=":templateId" element={<TemplateEditor />} />
    </Routes>
  );
}
