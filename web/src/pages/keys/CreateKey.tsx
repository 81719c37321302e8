import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { useId, useState, type FormEvent } from "react";
import { ApiKeysService } from "@gen/mail/v1/api_keys_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { CheckboxGroup } from "../../components/admin/CheckboxGroup.tsx";
import { errorMessage } from "../../app/errors.ts";
import { DateTime, fromLocalInput } from "../../app/format.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";

/** "New key": a name, scopes ticked from those the member holds, an optional expiry; then the secret, once. */
export function CreateKey() {
  const id = useId();
  // The scopes the member holds: a key can be given no more.
  const grantable = useSession().session.scopes;
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<string>>(new Set());
  const [expires, setExpires] = useState("");
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const refresh = useRefresh(ApiKeysService);
  const create = useMutation(ApiKeysService.method.createApiKey, { onSuccess: refresh });

  const reset = () => {
    setName("");
    setScopes(new Set());
    setExpires("");
    setProblem(undefined);
    create.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const expiresAt = fromLocalInput(expires);
    if (!name.trim()) return setProblem("Give the key a name.");
    if (scopes.size === 0) return setProblem("Tick at least one scope.");
    if (expires && (!expiresAt || expiresAt.getTime() <= Date.now())) return setProblem("The expiry must be in the future.");
    setProblem(undefined);
    create.mutate({ name: name.trim(), scopes: [...scopes], ...(expiresAt ? { expiresAt: timestampFromDate(expiresAt) } : {}) });
  };

  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) reset();
  };
  return (
    <FormDialog
      label="New key"
      title={create.isSuccess ? "Key created" : "New API key"}
      open={open}
      onOpenChange={openOrClose}
    >
      {create.isSuccess ? (
        <>
          <p>
            The key <strong>{create.data.key?.name}</strong> ({create.data.key?.scopes.join(", ")})
            {create.data.key?.expiresAt ? (
              <>
                {" "}
                works until <DateTime value={create.data.key.expiresAt} />
              </>
            ) : null}
            .
          </p>
          <SecretOnce label="API key" secret={create.data.secret} />
          <div className="admin-actions">
            <button type="button" className="admin-primary" onClick={() => openOrClose(false)}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form className="admin-form" onSubmit={submit} noValidate>
          <div className="admin-field">
            <label htmlFor={`${id}-name`}>Name</label>
            <input id={`${id}-name`} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <CheckboxGroup legend="Scopes" options={grantable.map((value) => ({ value }))} selected={scopes} onChange={setScopes} />
          <div className="admin-field">
            <label htmlFor={`${id}-expires`}>Expires (optional, your local time)</label>
            <input id={`${id}-expires`} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
          </div>
          {problem || create.isError ? (
            <p role="alert" className="admin-error">
              {problem ?? errorMessage(create.error)}
            </p>
          ) : null}
          <div className="admin-actions">
            <button type="submit" className="admin-primary" disabled={create.isPending}>
              {create.isPending ? "Creating…" : "Create key"}
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
