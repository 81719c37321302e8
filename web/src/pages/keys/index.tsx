import { type ApiKey, ApiKeysService, ApiKeyStatus, ApiKeyStatusSchema } from "@gen/mail/v1/api_keys_pb.js";
import { enumEntries, enumName } from "../../app/enums.ts";
import { DateTime } from "../../app/format.tsx";
import { Words } from "../../components/admin/Words.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { CreateKey } from "./CreateKey.tsx";
import { RevokeKey } from "./RevokeKey.tsx";
import { RotateKey } from "./RotateKey.tsx";

const STATUSES = enumEntries<ApiKeyStatus>(ApiKeyStatusSchema);

const COLUMNS: readonly Column<ApiKey>[] = [
  { header: "Name", role: "title", cell: (key) => key.name },
  { header: "Prefix", cell: (key) => <span className="mono">{key.prefix}</span> },
  { header: "Scopes", cell: (key) => <Words items={key.scopes} /> },
  {
    header: "Status",
    cell: (key) => (
      <>
        <span className={key.status === ApiKeyStatus.ACTIVE ? "badge badge-ok" : "badge badge-bad"}>{enumName(STATUSES, key.status)}</span>
        {key.revokedAt ? (
          <span className="hint">
            {" "}
            <DateTime value={key.revokedAt} />
          </span>
        ) : null}
      </>
    ),
  },
  { header: "Created", cell: (key) => <DateTime value={key.createdAt} /> },
  { header: "Expires", cell: (key) => <DateTime value={key.expiresAt} empty="never" /> },
  { header: "Last used", cell: (key) => <DateTime value={key.lastUsedAt} empty="never" /> },
  { header: "Created by", cell: (key) => (key.createdBy ? <span className="break">{key.createdBy}</span> : <span className="muted">—</span>) },
  {
    header: "Actions",
    role: "actions",
    cell: (key) =>
      key.status === ApiKeyStatus.ACTIVE ? (
        <div className="row-actions">
          <RotateKey apiKey={key} />
          <RevokeKey apiKey={key} />
        </div>
      ) : null,
  },
];

/** The API keys tab (Mail administrators): /admin/keys. */
export default function KeysPage() {
  const list = usePagedList(ApiKeysService.method.listApiKeys, {});
  return (
    <Page title="API keys" actions={<CreateKey />}>
      <p className="hint">Keys belong on servers only, never in web pages or mobile apps. The secret of a key is shown once, when it is created.</p>
      <ListView list={list} label="Table of API keys" noun="keys" columns={COLUMNS} empty="No key yet." />
    </Page>
  );
}
