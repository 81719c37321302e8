import { RadioGroup } from "radix-ui";
import { useId } from "react";
import { MemberRole } from "@gen/mail/v1/members_pb.js";

export const ROLES: readonly { role: MemberRole; name: string; hint: string }[] = [
  { role: MemberRole.MEMBER, name: "member", hint: "reads the message log" },
  { role: MemberRole.ADMIN, name: "admin", hint: "also API keys, webhooks, members and the audit log" },
  { role: MemberRole.OWNER, name: "owner", hint: "everything, and making or unmaking owners" },
];

export function roleName(role: MemberRole): string {
  return ROLES.find((r) => r.role === role)?.name ?? "—";
}

/** The role picker: a Radix RadioGroup (arrow keys move between roles). */
export function RolePicker({ value, onChange, legend = "Role" }: { value: MemberRole; onChange: (role: MemberRole) => void; legend?: string }) {
  const id = useId();
  return (
    <fieldset className="admin-radios">
      <legend>{legend}</legend>
      <RadioGroup.Root value={String(value)} onValueChange={(next) => onChange(Number(next) as MemberRole)} aria-label={legend}>
        {ROLES.map((r) => (
          <div className="admin-radio" key={r.role}>
            <RadioGroup.Item id={`${id}-${r.name}`} className="admin-radio-dot" value={String(r.role)}>
              <RadioGroup.Indicator className="admin-radio-mark" />
            </RadioGroup.Item>
            <label htmlFor={`${id}-${r.name}`}>
              {r.name} <span className="admin-hint">({r.hint})</span>
            </label>
          </div>
        ))}
      </RadioGroup.Root>
    </fieldset>
  );
}
