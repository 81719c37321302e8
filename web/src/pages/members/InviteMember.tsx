import { useMutation } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { MemberRole, MembersService } from "@gen/mail/v1/members_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { DateTime } from "../../app/format.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { RolePicker } from "./roles.tsx";

/** "Invite": email, name, role; the sign-in link is emailed, or shown once to hand over. */
export function InviteMember() {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [role, setRole] = useState<MemberRole>(MemberRole.MEMBER);
  const refresh = useRefresh(MembersService);
  const invite = useMutation(MembersService.method.inviteMember, { onSuccess: refresh });
  const reset = () => {
    setEmail("");
    setDisplayName("");
    setRole(MemberRole.MEMBER);
    invite.reset();
  };
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) reset();
  };
  return (
    <FormDialog
      label="Invite member"
      title={invite.isSuccess ? "Member invited" : "Invite a member"}
      open={open}
      onOpenChange={openOrClose}
    >
      {invite.isSuccess ? (
        <>
          {invite.data.emailed ? (
            <p role="status">A sign-in link was emailed to {invite.data.member?.email}.</p>
          ) : (
            <SecretOnce label={`Sign-in link for ${invite.data.member?.email ?? ""}`} secret={invite.data.signInUrl}>
              <p>
                Hand this link to them. It works once
                {invite.data.signInUrlExpiresAt ? (
                  <>
                    , until <DateTime value={invite.data.signInUrlExpiresAt} />
                  </>
                ) : null}
                .
              </p>
            </SecretOnce>
          )}
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
            invite.mutate({ email: email.trim(), role, ...(displayName.trim() ? { displayName: displayName.trim() } : {}) });
          }}
        >
          <div className="admin-field">
            <label htmlFor={`${id}-email`}>Email</label>
            <input id={`${id}-email`} type="email" required maxLength={254} autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
          </div>
          <div className="admin-field">
            <label htmlFor={`${id}-name`}>Name (optional)</label>
            <input id={`${id}-name`} maxLength={200} autoComplete="off" value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
          </div>
          <RolePicker value={role} onChange={setRole} />
          {invite.isError ? (
            <p role="alert" className="admin-error">
              {errorMessage(invite.error)}
            </p>
          ) : null}
          <div className="admin-actions">
            <button type="submit" className="admin-primary" disabled={invite.isPending}>
              {invite.isPending ? "Inviting…" : "Send invitation"}
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
