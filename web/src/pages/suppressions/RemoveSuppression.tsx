import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { MemberRole } from "@gen/mail/v1/members_pb.js";
import { RemoveSuppressionRequestSchema, type Suppression, SuppressionReason, SuppressionsService } from "@gen/mail/v1/suppressions_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { text } from "../../components/form/contract-rules.ts";
import { Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";

/**
 * "Remove": takes an address off the list with a written reason (kept in
 * the audit log). A complaint needs the owner role; the dialog says so,
 * and to anyone else it offers nothing to submit (it closes with × or Escape).
 */
export function RemoveSuppression({ suppression }: { suppression: Suppression }) {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(SuppressionsService);
  const remove = useMutation(SuppressionsService.method.removeSuppression);
  const isOwner = useSession().session.member?.role === MemberRole.OWNER;
  const form = useContractForm({ request: RemoveSuppressionRequestSchema, fields: { reason: text() }, defaults: { reason: "" } });
  const complaint = suppression.reason === SuppressionReason.COMPLAINT;
  const allowed = !complaint || isOwner;
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) form.reset();
  };
  return (
    <FormDialog
      label="Remove"
      ariaLabel={`Remove ${suppression.email} from the suppression list`}
      triggerClass="button button-danger"
      title={`Remove ${suppression.email}?`}
      open={open}
      onOpenChange={openOrClose}
    >
      {complaint ? (
        <p className="warning">
          This recipient reported your mail as spam. Only an owner of your company may remove a complaint
          {isOwner ? "; you are one." : "; ask one of your owners."}
        </p>
      ) : null}
      {allowed ? (
        <Form
          form={form}
          className="form"
          onSubmit={async ({ reason }) => {
            await remove.mutateAsync({ email: suppression.email, reason });
            await refresh();
            setOpen(false);
          }}
        >
          <p>Messages to this address go out again; its next bounce or complaint suppresses it again.</p>
          <TextField name="reason" label="Why may it be mailed again?" hint="Kept in the audit log." autoComplete="off" />
          <FormAlert />
          <div className="actions">
            <Submit pending="Removing…" className="button button-danger">
              Remove from the list
            </Submit>
          </div>
        </Form>
      ) : null}
    </FormDialog>
  );
}
