import "../../components/admin/admin.css";
import { useQuery } from "@connectrpc/connect-query";
import { type ApiKey, ApiKeysService, ApiKeyStatus } from "@gen/mail/v1/api_keys_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { Words } from "../../components/admin/Words.tsx";
import { DateTime } from "../../app/format.tsx";
import { CreateKey } from "./CreateKey.tsx";
import { RevokeKey } from "./RevokeKey.tsx";
import { RotateKey } from "./RotateKey.tsx";

const STATUS: Record<ApiKeyStatus, string> = {
  [ApiKeyStatus.UNSPECIFIED]: "—",
  [ApiKeyStatus.ACTIVE]: "active",
  [ApiKeyStatus.REVOKED]: "revoked",
  [ApiKeyStatus.EXPIRED]: "expired",
};

/** The API keys tab (Mail administrators): /admin/keys. */
export default function KeysPage() {
  const keys = useQuery(ApiKeysService.method.listApiKeys, {});
  return (
    <section className="admin-page" aria-labelledby="keys-title">
      <header className="admin-page-header">
        <h1 id="keys-title">API keys</h1>
        <CreateKey />
      </header>
      <p className="admin-hint">Keys belong on servers only, never in web pages or mobile apps. The secret of a key is shown once, when it is created.</p>
      {keys.isPending ? (
        <p role="status">Loading keys…</p>
      ) : keys.isError ? (
        <p role="alert" className="admin-error">
          {errorMessage(keys.error)}
        </p>
      ) : keys.data.items.length === 0 ? (
        <p>No key yet.</p>
      ) : (
        <div className="admin-table-wrap" tabIndex={0} role="region" aria-label="Table of API keys">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Created by</th>
                <th scope="col">
                  <span className="admin-visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.items.map((key) => (
                <KeyRow key={key.id} apiKey={key} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function KeyRow({ apiKey }: { apiKey: ApiKey }) {
  const active = apiKey.status === ApiKeyStatus.ACTIVE;
  return (
    <tr data-key-id={apiKey.id}>
      <th scope="row">{apiKey.name}</th>
      <td className="admin-mono">{apiKey.prefix}</td>
      <td>
        <Words items={apiKey.scopes} />
      </td>
      <td>
        <span className={`admin-badge admin-badge-${STATUS[apiKey.status]}`}>{STATUS[apiKey.status]}</span>
        {apiKey.revokedAt ? (
          <span className="admin-hint">
            {" "}
            <DateTime value={apiKey.revokedAt} />
          </span>
        ) : null}
      </td>
      <td>
        <DateTime value={apiKey.createdAt} />
      </td>
      <td>
        <DateTime value={apiKey.expiresAt} empty="never" />
      </td>
      <td>
        <DateTime value={apiKey.lastUsedAt} empty="never" />
      </td>
      <td>{apiKey.createdBy || <span className="admin-muted">—</span>}</td>
      <td>
        <div className="admin-row-actions">
          {active ? (
            <>
              <RotateKey apiKey={apiKey} />
              <RevokeKey apiKey={apiKey} />
            </>
          ) : null}
        </div>
      </td>
    </tr>
  );
}
