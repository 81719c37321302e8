import "../../components/admin/admin.css";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { type Member, MembersService } from "@gen/mail/v1/members_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { errorMessage } from "../../app/errors.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { InviteMember } from "./InviteMember.tsx";
import { RolePicker, roleName } from "./roles.tsx";

/** The Members tab (Mail administrators): /admin/members. */
export default function MembersPage() {
  const members = useQuery(MembersService.method.listMembers, {});
  const me = useSession().session.member?.id;
  return (
    <section className="admin-page" aria-labelledby="members-title">
      <header className="admin-page-header">
        <h1 id="members-title">Members</h1>
        <InviteMember />
      </header>
      <p className="admin-hint">Members sign in with a one-time link. At least one owner always remains.</p>
      {members.isPending ? (
        <p role="status">Loading members…</p>
      ) : members.isError ? (
        <p role="alert" className="admin-error">
          {errorMessage(members.error)}
        </p>
      ) : (
        <div className="admin-table-wrap" tabIndex={0} role="region" aria-label="Table of members">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Added</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">
                  <span className="admin-visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.items.map((member) => (
                <MemberRow key={member.id} member={member} isMe={member.id === me} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function MemberRow({ member, isMe }: { member: Member; isMe: boolean }) {
  const refresh = useRefresh(MembersService);
  const remove = useMutation(MembersService.method.removeMember);
  const endSessions = useMutation(MembersService.method.endMemberSessions);
  const who = member.displayName || member.email;
  return (
    <tr data-member-id={member.id}>
      <th scope="row">
        {member.displayName || <span className="admin-muted">—</span>}
        {isMe ? <span className="admin-hint"> (you)</span> : null}
        {member.disabled ? <span className="admin-badge admin-badge-revoked">disabled</span> : null}
      </th>
      <td>{member.email}</td>
      <td>{roleName(member.role)}</td>
      <td>
        <DateTime value={member.createdAt} />
      </td>
      <td>
        <DateTime value={member.lastSignInAt} empty="never" />
      </td>
      <td>
        <div className="admin-row-actions">
          <ChangeRole member={member} />
          {isMe ? null : (
            <>
              <ConfirmAction
                label="End sessions"
                ariaLabel={`End sessions of ${who}`}
                title={`End every session of ${who}?`}
                description={<p>They are signed out everywhere and must sign in again with a new link.</p>}
                confirmLabel="End sessions"
                onConfirm={async () => {
                  const ended = await endSessions.mutateAsync({ id: member.id });
                  await refresh();
                  return ended;
                }}
              />
              {endSessions.isSuccess ? (
                <span role="status" className="admin-hint">
                  {formatNumber(endSessions.data.ended)} ended
                </span>
              ) : null}
              <ConfirmAction
                label="Remove"
                ariaLabel={`Remove ${who}`}
                title={`Remove ${who}?`}
                description={<p>{member.email} loses access at once: every session of theirs ends.</p>}
                confirmLabel="Remove member"
                destructive
                onConfirm={async () => {
                  await remove.mutateAsync({ id: member.id });
                  await refresh();
                }}
              />
            </>
          )}
        </div>
      </td>
    </tr>
  );
}

function ChangeRole({ member }: { member: Member }) {
  const [open, setOpen] = useState(false);
  const [role, setRole] = useState(member.role);
  const refresh = useRefresh(MembersService);
  const update = useMutation(MembersService.method.updateMember, {
    onSuccess: async () => {
      await refresh();
      setOpen(false);
    },
  });
  const who = member.displayName || member.email;
  return (
    <FormDialog
      label="Change role"
      ariaLabel={`Change role of ${who}`}
      triggerClass="admin-secondary"
      title={`Role of ${who}`}
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (next) setRole(member.role);
        else update.reset();
      }}
    >
      <form
        className="admin-form"
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate({ id: member.id, role });
        }}
      >
        <RolePicker value={role} onChange={setRole} />
        {update.isError ? (
          <p role="alert" className="admin-error">
            {errorMessage(update.error)}
          </p>
        ) : null}
        <div className="admin-actions">
          <button type="submit" className="admin-primary" disabled={update.isPending || role === member.role}>
            {update.isPending ? "Saving…" : "Save role"}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
