import { useQuery } from "@connectrpc/connect-query";
import { type Template, TemplatesService } from "@gen/mail/v1/templates_pb.js";
import { Link } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import type { PagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";

const COLUMNS: readonly Column<Template>[] = [
  titleLink("Name", (template) => template.name, { className: "mono" }),
  { header: "Subject", wide: true, cell: (template) => template.subject },
  { header: "Version", cell: (template) => formatNumber(template.version) },
  { header: "Updated", cell: (template) => <DateTime value={template.updatedAt} /> },
];

/** The company's templates (one answer, by name) as the list component reads a list. */
function useTemplates(): PagedList<Template> {
  const query = useQuery(TemplatesService.method.listTemplates, {});
  return {
    items: query.data?.templates ?? [],
    pending: query.isPending,
    error: query.isError ? query.error : undefined,
    paged: false,
    hasMore: false,
    loadingMore: false,
    moreError: undefined,
    loadMore: () => undefined,
    retry: () => void query.refetch(),
  };
}

/** The Templates tab's list: /admin/templates. */
export function TemplateList() {
  const { isAdmin } = useSession();
  const list = useTemplates();
  return (
    <Page
      title="Templates"
      actions={
        isAdmin ? (
          <Link className="button button-primary" to="new">
            New template
          </Link>
        ) : undefined
      }
    >
      <p className="hint">
        A send names a template with <span className="mono">templateId</span> (its id or its name) and fills its <span className="mono">{"{{ variables }}"}</span>. Open one
        to edit it with a live preview, see its versions or send yourself a test.
      </p>
      <ListView list={list} label="Table of templates" noun="templates" columns={COLUMNS} empty="No template yet." />
    </Page>
  );
}
