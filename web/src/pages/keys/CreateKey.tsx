import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { ApiKeysService, CreateApiKeyRequestSchema } from "@gen/mail/v1/api_keys_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { DateTime, fromLocalInput } from "../../app/format.tsx";
import { DialogDone, FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { choices, localTime, text } from "../../components/form/contract-rules.ts";
import { ChoicesField } from "../../components/form/ChoicesField.tsx";
import { Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";

/** "New key": a name, scopes ticked from those the member holds, an optional expiry; then the secret, once. */
export function CreateKey() {
  // The scopes the member holds: a key can be given no more.
  const grantable = useSession().session.scopes;
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(ApiKeysService);
  const create = useMutation(ApiKeysService.method.createApiKey, { onSuccess: refresh });
  const form = useContractForm({
    request: CreateApiKeyRequestSchema,
    fields: { name: text(), scopes: choices("Tick at least one scope."), expiresAt: localTime() },
    defaults: { name: "", scopes: [], expiresAt: "" },
  });

  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      form.reset();
      create.reset();
    }
  };
  return (
    <FormDialog label="New key" title={create.isSuccess ? "Key created" : "New API key"} open={open} onOpenChange={openOrClose}>
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
          <DialogDone onDone={() => openOrClose(false)} />
        </>
      ) : (
        <Form
          form={form}
          className="form"
          onSubmit={({ name, scopes, expiresAt }) => {
            const expires = fromLocalInput(expiresAt);
            return create.mutateAsync({ name, scopes, ...(expires ? { expiresAt: timestampFromDate(expires) } : {}) });
          }}
        >
          <TextField name="name" label="Name" autoComplete="off" />
          <ChoicesField name="scopes" legend="Scopes" groups={[{ options: grantable.map((value) => ({ value })) }]} />
          <TextField name="expiresAt" label="Expires (optional, your local time)" type="datetime-local" />
          <FormAlert />
          <div className="actions">
            <Submit pending="Creating…">Create key</Submit>
          </div>
        </Form>
      )}
    </FormDialog>
  );
}
