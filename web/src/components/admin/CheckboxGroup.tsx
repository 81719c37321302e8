import { Checkbox } from "radix-ui";
import { useId } from "react";

/** A set of Radix checkboxes under one legend (scopes of a key, events of an endpoint). */
export function CheckboxGroup(props: {
  legend: string;
  options: readonly { value: string; label?: string; hint?: string }[];
  selected: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  /** Described by (for example a field error). */
  describedBy?: string;
}) {
  const id = useId();
  const toggle = (value: string, on: boolean) => {
    const next = new Set(props.selected);
    if (on) next.add(value);
    else next.delete(value);
    props.onChange(next);
  };
  return (
    <fieldset className="admin-checkboxes" aria-describedby={props.describedBy}>
      <legend>{props.legend}</legend>
      {props.options.map((option, index) => (
        <div className="admin-checkbox" key={option.value}>
          <Checkbox.Root
            id={`${id}-${index}`}
            className="admin-checkbox-box"
            value={option.value}
            checked={props.selected.has(option.value)}
            onCheckedChange={(checked) => toggle(option.value, checked === true)}
          >
            <Checkbox.Indicator className="admin-checkbox-mark">✓</Checkbox.Indicator>
          </Checkbox.Root>
          <label htmlFor={`${id}-${index}`}>
            <span className="admin-mono">{option.label ?? option.value}</span>
            {option.hint ? <span className="admin-hint"> {option.hint}</span> : null}
          </label>
        </div>
      ))}
    </fieldset>
  );
}
