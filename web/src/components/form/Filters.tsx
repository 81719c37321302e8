import type { ReactNode } from "react";
import type { FieldValues } from "react-hook-form";
import { dateParam, fromLocalInput, toLocalInput } from "../../app/format.tsx";
import { type ContractForm, Form, FormAlert, Submit } from "./Form.tsx";

/**
 * A list's filters: a ContractForm (the list request's rules) whose values
 * live in the URL, so a filtered view is a link and back and forward move
 * between filters. Pages key it by the URL, so it always shows the filters
 * in force.
 */
export function Filters<V extends FieldValues, O>(props: {
  form: ContractForm<V, O>;
  /** "Filter messages" */
  label: string;
  onApply: (values: O) => void;
  /** Whether any filter is in force (the clear button shows). */
  filtered: boolean;
  onClear: () => void;
  children: ReactNode;
}) {
  return (
    <Form form={props.form} className="filters" role="search" aria-label={props.label} onSubmit={props.onApply}>
      {props.children}
      <FormAlert />
      <div className="actions">
        <Submit pending="Applying…">Apply filters</Submit>
        {props.filtered ? (
          <button type="button" className="button" onClick={props.onClear}>
            Clear filters
          </button>
        ) : null}
      </div>
    </Form>
  );
}

/** The filters a URL holds: each named one ("" when absent), and `since`, an instant. */
export function filtersIn<K extends string>(params: URLSearchParams, names: readonly K[]): Record<K, string> & { since: Date | undefined } {
  const values = Object.fromEntries(names.map((name) => [name, params.get(name) ?? ""])) as Record<K, string>;
  return { ...values, since: dateParam(params.get("since")) };
}

/** The URL parameters of a filtered view: every value given, a `datetime-local` value as an instant (ISO 8601, the same everywhere). */
export function filterParams(values: Readonly<Record<string, string>>, localTimes: readonly string[] = []): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    const trimmed = value.trim();
    if (trimmed === "") continue;
    if (localTimes.includes(name)) {
      const date = fromLocalInput(trimmed);
      if (date) params.set(name, date.toISOString());
    } else {
      params.set(name, trimmed);
    }
  }
  return params;
}

/** A URL's instant as a `datetime-local` input's value (empty when absent). */
export function localInputOf(date: Date | undefined): string {
  return date ? toLocalInput(date) : "";
}
