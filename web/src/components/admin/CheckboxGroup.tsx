import { Checkbox } from "radix-ui";
import { useId } from "react";

/**
 * Radix checkboxes over a set of values (scopes of a key, events of an
 * endpoint); under their own legend when given one (a group among several).
 */
export function CheckboxGroup(props: {
  legend?: string;
  options: readonly { value: string; label?: string; hint?: string }[];
  selected: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
}) {
  const id = useId();
  const toggle = (value: string, on: boolean) => {
    const next = new Set(props.selected);
    if (on) next.add(value);
    else next.delete(value);
    props.onChange(next);
  };
  const boxes = props.options.map((option, index) => (
    <div className="choice" key={option.value}>
      <Checkbox.Root
        id={`${id}-${index}`}
        className="checkbox"
        value={option.value}
        checked={props.selected.has(option.value)}
        onCheckedChange={(checked) => toggle(option.value, checked === true)}
      >
        <Checkbox.Indicator className="checkbox-mark">✓</Checkbox.Indicator>
      </Checkbox.Root>
      <label htmlFor={`${id}-${index}`}>
        <span className="mono">{option.label ?? option.value}</span>
        {option.hint ? <span className="hint"> {option.hint}</span> : null}
      </label>
    </div>
  ));
  if (!props.legend) return <>{boxes}</>;
  return (
    <fieldset className="choices">
      <legend>{props.legend}</legend>
      {boxes}
    </fieldset>
  );
}
