import { RadioGroup } from "radix-ui";
import { useId } from "react";
import { MemberRole, MemberRoleSchema } from "@gen/mail/v1/members_pb.js";
import { enumEntries, enumName } from "../../app/enums.ts";

/** The roles of the contract (`owner`, `admin`, `member`), in its order. */
export const ROLES = enumEntries<MemberRole>(MemberRoleSchema);

/** What each role may do, in the screen's words. */
const HINTS: Record<MemberRole, string> = {
  [MemberRole.UNSPECIFIED]: "",
  [MemberRole.MEMBER]: "reads the message log, contacts and sign-up forms",
  [MemberRole.ADMIN]: "also lists, forms, API keys, webhooks, members and the audit log",
  [MemberRole.OWNER]: "everything, and making or unmaking owners",
};

export function roleName(role: MemberRole): string {
  return enumName(ROLES, role);
}

/** The role picker: a Radix RadioGroup (arrow keys move between roles). */
export function RolePicker({ value, onChange, legend = "Role" }: { value: MemberRole; onChange: (role: MemberRole) => void; legend?: string }) {
  const id = useId();
  return (
    <fieldset className="radios">
      <legend>{legend}</legend>
      <RadioGroup.Root value={String(value)} onValueChange={(next) => onChange(Number(next) as MemberRole)} aria-label={legend}>
        {ROLES.map((r) => (
          <div className="choice" key={r.value}>
            <RadioGroup.Item id={`${id}-${r.name}`} className="radio" value={String(r.value)}>
              <RadioGroup.Indicator className="radio-mark" />
            </RadioGroup.Item>
            <label htmlFor={`${id}-${r.name}`}>
              {r.name} <span className="hint">({HINTS[r.value]})</span>
            </label>
          </div>
        ))}
      </RadioGroup.Root>
    </fieldset>
  );
}
