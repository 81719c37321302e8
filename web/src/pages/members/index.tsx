import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { type Member, MembersService, type MemberRole, UpdateMemberRequestSchema } from "@gen/mail/v1/members_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { Address, DateTime, formatNumber } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { picked } from "../../components/form/contract-rules.ts";
import { ControlledField, Form, FormAlert, Submit, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { InviteMember } from "./InviteMember.tsx";
import { RolePicker, roleName } from "./roles.tsx";

function columns(me: string | undefined): readonly Column<Member>[] {
  return [
    {
      header: "Name",
      role: "title",
      cell: (member) => (
        <>
          {member.displayName || <span className="muted">—</span>}
          {member.id === me ? <span className="hint"> (you)</span> : null}
          {member.disabled ? <span className="badge badge-bad">disabled</span> : null}
        </>
      ),
    },
    { header: "Email", cell: (member) => <Address value={member.email} /> },
    { header: "Role", cell: (member) => roleName(member.role) },
    { header: "Added", cell: (member) => <DateTime value={member.createdAt} /> },
    { header: "Last sign-in", cell: (member) => <DateTime value={member.lastSignInAt} empty="never" /> },
    { header: "Actions", role: "actions", cell: (member) => <MemberActions member={member} isMe={member.id === me} /> },
  ];
}

/** The Members tab (Mail administrators): /admin/members. */
export default function MembersPage() {
  const list = usePagedList(MembersService.method.listMembers, {});
  const me = useSession().session.member?.id;
  return (
    <Page title="Members" actions={<InviteMember />}>
      <p className="hint">Members sign in with a one-time link. At least one owner always remains.</p>
      <ListView list={list} label="Table of members" noun="members" columns={columns(me)} empty="No member yet." />
    </Page>
  );
}

function MemberActions({ member, isMe }: { member: Member; isMe: boolean }) {
  const refresh = useRefresh(MembersService);
  const remove = useMutation(MembersService.method.removeMember);
  const endSessions = useMutation(MembersService.method.endMemberSessions);
  const who = member.displayName || member.email;
  return (
    <div className="row-actions">
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
            <span role="status" className="hint">
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
  );
}

function ChangeRole({ member }: { member: Member }) {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(MembersService);
  const update = useMutation(MembersService.method.updateMember);
  const form = useContractForm({ request: UpdateMemberRequestSchema, fields: { role: picked<MemberRole>() }, defaults: { role: member.role } });
  const who = member.displayName || member.email;
  return (
    <FormDialog
      label="Change role"
      ariaLabel={`Change role of ${who}`}
      triggerClass="button"
      title={`Role of ${who}`}
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (next) form.methods.reset({ role: member.role });
      }}
    >
      <Form
        form={form}
        className="form"
        onSubmit={async ({ role }) => {
          await update.mutateAsync({ id: member.id, role });
          await refresh();
          setOpen(false);
        }}
      >
        <ControlledField<MemberRole> name="role" render={(role, onChange) => <RolePicker value={role} onChange={onChange} />} />
        <FormAlert />
        <div className="actions">
          <Submit pending="Saving…">Save role</Submit>
        </div>
      </Form>
    </FormDialog>
  );
}
