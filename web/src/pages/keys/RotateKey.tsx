import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { type ApiKey, ApiKeysService, RotateApiKeyRequestSchema } from "@gen/mail/v1/api_keys_pb.js";
import { DateTime } from "../../app/format.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { choice } from "../../components/form/contract-rules.ts";
import { Form, FormAlert, SelectField, Submit, useContractForm } from "../../components/form/Form.tsx";

const GRACE_CHOICES: readonly { value: string; label: string }[] = [
  { value: "0", label: "Stop the old key now" },
  { value: "1", label: "1 hour" },
  { value: "24", label: "24 hours" },
  { value: "72", label: "3 days" },
  { value: "168", label: "7 days" },
];

/** Replaces a key by a new one; the old one keeps working for the chosen grace, and the screen says until when. */
export function RotateKey({ apiKey }: { apiKey: ApiKey }) {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(ApiKeysService);
  // The table is refreshed when the dialog closes: refreshed earlier, a key replaced at once would leave the table
  // (and this dialog, with the new secret, with it).
  const rotate = useMutation(ApiKeysService.method.rotateApiKey);
  const form = useContractForm({ request: RotateApiKeyRequestSchema, fields: { graceHours: choice() }, defaults: { graceHours: "24" } });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      if (rotate.isSuccess) void refresh();
      rotate.reset();
      form.reset();
    }
  };
  return (
    <FormDialog
      label="Rotate"
      ariaLabel={`Rotate ${apiKey.name} (${apiKey.prefix})`}
      triggerClass="button"
      title={rotate.isSuccess ? "Key rotated" : `Rotate the key “${apiKey.name}”`}
      open={open}
      onOpenChange={openOrClose}
    >
      {rotate.isSuccess ? (
        <>
          <p>
            The old key <span className="mono">{rotate.data.replaced?.prefix}</span>{" "}
            {rotate.data.replaced?.expiresAt ? (
              <>
                stops working at <DateTime value={rotate.data.replaced.expiresAt} />
              </>
            ) : (
              "has stopped"
            )}
            ; then it answers 401 API_KEY_EXPIRED.
          </p>
          <SecretOnce label="New API key" secret={rotate.data.secret} />
          <div className="actions">
            <button type="button" className="button button-primary" onClick={() => openOrClose(false)}>
              Done
            </button>
          </div>
        </>
      ) : (
        <Form form={form} className="form" onSubmit={({ graceHours }) => rotate.mutateAsync({ id: apiKey.id, graceHours: Number(graceHours) })}>
          <p>A new key with the same name and scopes replaces it. Its secret is shown once.</p>
          <SelectField name="graceHours" label="The old key keeps working for" options={GRACE_CHOICES} />
          <FormAlert />
          <div className="actions">
            <Submit pending="Rotating…">Rotate key</Submit>
          </div>
        </Form>
      )}
    </FormDialog>
  );
}
