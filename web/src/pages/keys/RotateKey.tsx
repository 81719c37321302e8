import { useMutation } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { type ApiKey, ApiKeysService } from "@gen/mail/v1/api_keys_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { DateTime } from "../../app/format.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";

const GRACE_CHOICES: readonly { hours: number; label: string }[] = [
  { hours: 0, label: "Stop the old key now" },
  { hours: 1, label: "1 hour" },
  { hours: 24, label: "24 hours" },
  { hours: 72, label: "3 days" },
  { hours: 168, label: "7 days" },
];

/** Replaces a key by a new one; the old one keeps working for the chosen grace, and the screen says until when. */
export function RotateKey({ apiKey }: { apiKey: ApiKey }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [grace, setGrace] = useState("24");
  const refresh = useRefresh(ApiKeysService);
  // The table is refreshed when the dialog closes: refreshed earlier, a key replaced at once would leave the table
  // (and this dialog, with the new secret, with it).
  const rotate = useMutation(ApiKeysService.method.rotateApiKey);
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      if (rotate.isSuccess) void refresh();
      rotate.reset();
    }
  };
  return (
    <FormDialog
      label="Rotate"
      ariaLabel={`Rotate ${apiKey.name} (${apiKey.prefix})`}
      triggerClass="admin-secondary"
      title={rotate.isSuccess ? "Key rotated" : `Rotate the key “${apiKey.name}”`}
      open={open}
      onOpenChange={openOrClose}
    >
      {rotate.isSuccess ? (
        <>
          <p>
            The old key <span className="admin-mono">{rotate.data.replaced?.prefix}</span>{" "}
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
          <div className="admin-actions">
            <button type="button" className="admin-primary" onClick={() => openOrClose(false)}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form
          className="admin-form"
          onSubmit={(event) => {
            event.preventDefault();
            rotate.mutate({ id: apiKey.id, graceHours: Number(grace) });
          }}
        >
          <p>A new key with the same name and scopes replaces it. Its secret is shown once.</p>
          <div className="admin-field">
            <label htmlFor={`${id}-grace`}>The old key keeps working for</label>
            <select id={`${id}-grace`} value={grace} onChange={(e) => setGrace(e.target.value)}>
              {GRACE_CHOICES.map((choice) => (
                <option key={choice.hours} value={String(choice.hours)}>
                  {choice.label}
                </option>
              ))}
            </select>
          </div>
          {rotate.isError ? (
            <p role="alert" className="admin-error">
              {errorMessage(rotate.error)}
            </p>
          ) : null}
          <div className="admin-actions">
            <button type="submit" className="admin-primary" disabled={rotate.isPending}>
              {rotate.isPending ? "Rotating…" : "Rotate key"}
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
