import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { InviteMemberRequestSchema, MemberRole, MembersService } from "@gen/mail/v1/members_pb.js";
import { DateTime } from "../../app/format.tsx";
import { DialogDone, FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { picked, text } from "../../components/form/contract-rules.ts";
import { ControlledField, Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";
import { RolePicker } from "./roles.tsx";

/** "Invite": email, name, role; the sign-in link is emailed, or shown to hand over. */
export function InviteMember() {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(MembersService);
  const invite = useMutation(MembersService.method.inviteMember, { onSuccess: refresh });
  const form = useContractForm({
    request: InviteMemberRequestSchema,
    fields: { email: text(), displayName: text(), role: picked<MemberRole>() },
    defaults: { email: "", displayName: "", role: MemberRole.MEMBER },
  });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      form.reset();
      invite.reset();
    }
  };
  const email = invite.data?.member?.email ?? "";
  return (
    <FormDialog label="Invite member" title={invite.isSuccess ? "Member invited" : "Invite a member"} open={open} onOpenChange={openOrClose}>
      {invite.isSuccess ? (
        <>
          {invite.data.emailed ? (
            <p role="status">
              A sign-in link was emailed to {email}. It works once, within 15 minutes
              {invite.data.signInUrlExpiresAt ? (
                <>
                  {" "}
                  (until <DateTime value={invite.data.signInUrlExpiresAt} />)
                </>
              ) : null}
              .
            </p>
          ) : (
            <SecretOnce
              label={`Sign-in link for ${email}`}
              secret={invite.data.signInUrl}
              warning={
                <>
                  <strong>Hand this sign-in link to {email}.</strong> It works once, within 15 minutes
                  {invite.data.signInUrlExpiresAt ? (
                    <>
                      {" "}
                      (until <DateTime value={invite.data.signInUrlExpiresAt} />)
                    </>
                  ) : null}
                  . Whoever opens it is signed in as them, so give it to them alone.
                </>
              }
            />
          )}
          <DialogDone onDone={() => openOrClose(false)} />
        </>
      ) : (
        <Form
          form={form}
          className="form"
          onSubmit={({ email, displayName, role }) => invite.mutateAsync({ email, role, ...(displayName ? { displayName } : {}) })}
        >
          <TextField name="email" label="Email" type="email" autoComplete="off" />
          <TextField name="displayName" label="Name (optional)" autoComplete="off" />
          <ControlledField<MemberRole> name="role" render={(role, onChange) => <RolePicker value={role} onChange={onChange} />} />
          <FormAlert />
          <div className="actions">
            <Submit pending="Inviting…">Send invitation</Submit>
          </div>
        </Form>
      )}
    </FormDialog>
  );
}
