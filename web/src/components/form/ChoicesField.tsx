import { Controller, useFormContext } from "react-hook-form";
import { CheckboxGroup } from "../admin/CheckboxGroup.tsx";
import { describedBy, FieldError, useField } from "./Form.tsx";

export interface ChoiceGroup {
  /** The group's own legend; none for a single group (the field's legend names it). */
  readonly legend?: string;
  readonly options: readonly { value: string; label?: string; hint?: string }[];
}

/** A set of checkboxes (scopes, events), in groups when there are many; the value is the ticked list. */
export function ChoicesField({ name, legend, groups }: { name: string; legend: string; groups: readonly ChoiceGroup[] }) {
  const { control } = useFormContext();
  const f = useField(name);
  return (
    <Controller
      control={control}
      name={name}
      render={({ field }) => {
        const selected = new Set<string>(field.value as string[]);
        const onChange = (next: Set<string>) => field.onChange([...next]);
        return (
          <fieldset className={groups.length > 1 ? "choices choices-grouped" : "choices"} aria-describedby={describedBy(f.error && f.errorId)}>
            <legend>{legend}</legend>
            {groups.map((group, index) => (
              <CheckboxGroup key={group.legend ?? index} legend={group.legend} options={group.options} selected={selected} onChange={onChange} />
            ))}
            <FieldError id={f.errorId} error={f.error} />
          </fieldset>
        );
      }}
    />
  );
}

