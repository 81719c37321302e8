import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type Template, type TemplateVersion, TemplatesService } from "@gen/mail/v1/templates_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import type { PagedList } from "../../components/list/paged-list.ts";

type VersionRow = TemplateVersion & { readonly id: string };

/** The kept versions (at most 20, newest first) as the list component reads a list. */
function useVersions(templateId: string): PagedList<VersionRow> {
  const query = useQuery(TemplatesService.method.listTemplateVersions, { templateId });
  return {
    items: (query.data?.versions ?? []).map((version) => ({ ...version, id: String(version.version) })),
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

/** The template's versions; owners and admins restore one (as a new version). */
export function TemplateVersions({ template }: { template: Template }) {
  const { isAdmin } = useSession();
  const list = useVersions(template.id);
  const columns: Column<VersionRow>[] = [
    { header: "Version", role: "title", cell: (row) => `Version ${formatNumber(row.version)}${row.version === template.version ? " (current)" : ""}` },
    { header: "Subject", wide: true, cell: (row) => row.subject },
    { header: "By", cell: (row) => <span className="mono">{row.createdBy}</span> },
    { header: "When", cell: (row) => <DateTime value={row.createdAt} /> },
    { header: "Change", cell: (row) => (row.restoredFrom !== undefined ? `restored version ${formatNumber(row.restoredFrom)}` : "edit") },
    ...(isAdmin
      ? [{ header: "Actions", role: "actions" as const, cell: (row: VersionRow) => (row.version === template.version ? null : <RestoreVersion template={template} version={row} />) }]
      : []),
  ];
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <p className="hint">Every change keeps a version; the last 20 are kept. Restoring one makes a new version with its content.</p>
      <ListView list={list} label="Table of versions" noun="versions" columns={columns} empty="No version kept." />
    </section>
  );
}

function RestoreVersion({ template, version }: { template: Template; version: VersionRow }) {
  const refresh = useRefresh(TemplatesService);
  const restore = useMutation(TemplatesService.method.restoreTemplateVersion);
  return (
    <ConfirmAction
      label="Restore"
      ariaLabel={`Restore version ${version.version}`}
      title={`Restore version ${version.version} of ${template.name}?`}
      description={<p>Its subject, HTML and text become the template&apos;s content as a new version; sends use it from now on. The versions in between stay.</p>}
      confirmLabel="Restore version"
      onConfirm={async () => {
        await restore.mutateAsync({ templateId: template.id, version: version.version });
        await refresh();
      }}
    />
  );
}
