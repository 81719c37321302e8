import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { AddSuppressionRequestSchema, SuppressionsService } from "@gen/mail/v1/suppressions_pb.js";
import { Address } from "../../app/format.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { text } from "../../components/form/contract-rules.ts";
import { Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";

/** "Add suppression": an address the company stops sending to (reason `manual`); an address already listed stays as it is. */
export function AddSuppression() {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(SuppressionsService);
  const add = useMutation(SuppressionsService.method.addSuppression, { onSuccess: refresh });
  const form = useContractForm({ request: AddSuppressionRequestSchema, fields: { email: text() }, defaults: { email: "" } });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      form.reset();
      add.reset();
    }
  };
  const email = add.data?.suppression?.email ?? "";
  return (
    <FormDialog
      label="Add suppression"
      title={add.isSuccess ? "Address suppressed" : "Suppress an address"}
      description={add.isSuccess ? undefined : "Messages to this address end as suppressed, without using a credit, until it is removed."}
      open={open}
      onOpenChange={openOrClose}
    >
      {add.isSuccess ? (
        <>
          <p role="status">
            {add.data.created ? (
              <>
                <Address value={email} /> is suppressed.
              </>
            ) : (
              <>
                <Address value={email} /> was already suppressed; nothing changed.
              </>
            )}
          </p>
          <div className="actions">
            <button type="button" className="button button-primary" onClick={() => openOrClose(false)}>
              Done
            </button>
          </div>
        </>
      ) : (
        <Form form={form} className="form" onSubmit={({ email }) => add.mutateAsync({ email })}>
          <TextField name="email" label="Email address" type="email" autoComplete="off" />
          <FormAlert />
          <div className="actions">
            <Submit pending="Adding…">Suppress address</Submit>
          </div>
        </Form>
      )}
    </FormDialog>
  );
}
