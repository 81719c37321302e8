import type { DescMessage } from "@bufbuild/protobuf";
import { zodResolver } from "@hookform/resolvers/zod";
import { Checkbox } from "radix-ui";
import {
  createContext,
  type FormHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useContext,
  useId,
  useState,
} from "react";
import { Controller, type FieldValues, FormProvider, get, type Path, useForm, useFormContext, type UseFormReturn } from "react-hook-form";
import { z } from "zod/mini";
import { errorCode, errorMessage, fieldProblems, sentence } from "../../app/errors.ts";
import { type FieldCheck, type FieldRule, fieldRule } from "./contract-rules.ts";

/**
 * The screen's one form pattern (react-hook-form): a form is declared as
 * the request it sends (its generated descriptor) and a check per field
 * (contract-rules.ts), so required fields and lengths come from the
 * contract; the fields below show their own problems, and a refusal of the
 * server lands where it belongs: a VALIDATION_ERROR on the field it names,
 * anything else (or a field the form does not have, without its name) above
 * the buttons.
 */

type Checks = Record<string, FieldCheck>;
type ValuesOf<C extends Checks> = { [K in keyof C]: z.input<ReturnType<C[K]>> };
type OutputOf<C extends Checks> = { [K in keyof C]: z.output<ReturnType<C[K]>> };

export interface ContractForm<V extends FieldValues, O> {
  readonly methods: UseFormReturn<V, unknown, O>;
  /** The contract's rule of each field of the form, by the field's name. */
  readonly rules: ReadonlyMap<string, FieldRule>;
  /** Error codes that concern one field (`WEBHOOK_HOST_NOT_ALLOWED`: `url`). */
  readonly codeFields: Readonly<Record<string, string>>;
  /** Back to the defaults, problems forgotten (a dialog closed). */
  reset(): void;
}

export function useContractForm<C extends Checks>(options: {
  /** The request the form sends: its fields' rules are the form's. */
  request: DescMessage;
  /** One check per field, named as the request's field (the TypeScript name). */
  fields: C;
  defaults: ValuesOf<C>;
  codeFields?: Readonly<Record<string, keyof C & string>>;
}): ContractForm<ValuesOf<C>, OutputOf<C>> {
  // Built once: the descriptors do not change while the screen runs.
  const [{ rules, schema }] = useState(() => {
    const rules = new Map(Object.keys(options.fields).map((name) => [name, fieldRule(options.request, name)] as const));
    const shape = Object.fromEntries(Object.entries(options.fields).map(([name, check]) => [name, check(rules.get(name) ?? { name, required: false })]));
    return { rules, schema: z.object(shape) };
  });
  const methods = useForm<ValuesOf<C>, unknown, OutputOf<C>>({
    resolver: zodResolver(schema) as never,
    defaultValues: options.defaults as never,
  });
  return { methods, rules, codeFields: options.codeFields ?? {}, reset: () => methods.reset() };
}

/** Shows a refused request on the form: on the field it concerns, or above the buttons. */
export function showServerError<V extends FieldValues, O>(form: ContractForm<V, O>, error: unknown): void {
  const { setError } = form.methods;
  const code = errorCode(error);
  const field = code ? form.codeFields[code] : undefined;
  if (field) {
    setError(field as Path<V>, { type: "server", message: errorMessage(error) }, { shouldFocus: true });
    return;
  }
  if (code !== "VALIDATION_ERROR") {
    setError("root.server", { type: "server", message: errorMessage(error) });
    return;
  }
  const elsewhere: string[] = [];
  let focus = true;
  for (const problem of fieldProblems(error)) {
    const own = ownPath(form.rules, problem.field);
    if (own !== undefined) {
      setError(own as Path<V>, { type: "server", message: sentence(problem.problem) }, { shouldFocus: focus });
      focus = false;
    } else {
      elsewhere.push(sentence(problem.problem));
    }
  }
  if (elsewhere.length > 0) setError("root.server", { type: "server", message: elsewhere.join(" ") });
}

/**
 * The form's own path of a field a VALIDATION_ERROR names: a field of the
 * request (`name`), or inside one of its lists (`fields[1].label` is
 * `fields.1.label`, the path react-hook-form gives that row's input).
 */
function ownPath(rules: ReadonlyMap<string, FieldRule>, field: string): string | undefined {
  const [, base = field, index, inner] = /^([^[.]+)\[(\d+)\](?:\.(.+))?$/.exec(field) ?? [];
  const own = [...rules].find(([, rule]) => rule.name === base)?.[0];
  if (own === undefined || index === undefined) return own;
  return inner === undefined ? `${own}.${index}` : `${own}.${index}.${inner}`;
}

const RulesContext = createContext<ReadonlyMap<string, FieldRule>>(new Map());

/** The <form> of a ContractForm: no browser validation (the checks above speak instead), server refusals shown. */
export function Form<V extends FieldValues, O>({
  form,
  onSubmit,
  children,
  ...attributes
}: { form: ContractForm<V, O>; onSubmit: (values: O) => unknown; children: ReactNode } & Omit<FormHTMLAttributes<HTMLFormElement>, "onSubmit">) {
  const submit = form.methods.handleSubmit(async (values) => {
    try {
      await onSubmit(values);
    } catch (error) {
      showServerError(form, error);
    }
  });
  return (
    <FormProvider {...form.methods}>
      <RulesContext value={form.rules}>
        <form noValidate onSubmit={(event) => void submit(event)} {...attributes}>
          {children}
        </form>
      </RulesContext>
    </FormProvider>
  );
}

/** What a field needs: its ids, its contract rule and its problem, if any. */
export function useField(name: string) {
  const id = useId();
  const { formState } = useFormContext();
  const rule = useContext(RulesContext).get(name);
  // By path: a row of a list (`fields.1.label`) has its problem there.
  const problem: unknown = get(formState.errors, `${name}.message`);
  const error = typeof problem === "string" ? problem : undefined;
  return { id, rule, error, errorId: `${id}-error`, hintId: `${id}-hint` };
}

export function describedBy(...ids: (string | false | undefined)[]): string | undefined {
  const joined = ids.filter(Boolean).join(" ");
  return joined === "" ? undefined : joined;
}

export function FieldError({ id, error }: { id: string; error: string | undefined }) {
  if (!error) return null;
  return (
    <p className="field-error" id={id} role="alert">
      {error}
    </p>
  );
}

type FieldState = ReturnType<typeof useField>;

/** The frame of every field: its label (when outside the control), the control, its hint and its problem. */
function FieldFrame({ f, label, hint, children }: { f: FieldState; label?: ReactNode; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      {label}
      {children}
      {hint !== undefined ? (
        <p className="hint" id={f.hintId}>
          {hint}
        </p>
      ) : null}
      <FieldError id={f.errorId} error={f.error} />
    </div>
  );
}

/** What a text control takes from its field: its id, the contract's length limit, its problem and its hint. */
function textControl(f: FieldState, hint: ReactNode | undefined) {
  return {
    id: f.id,
    maxLength: f.rule?.maxLength,
    "aria-invalid": f.error ? true : undefined,
    "aria-describedby": describedBy(hint !== undefined && f.hintId, f.error && f.errorId),
  };
}

/** A labelled input; its length limit is the contract's. */
export function TextField({ name, label, hint, ...input }: { name: string; label: string; hint?: ReactNode } & Omit<InputHTMLAttributes<HTMLInputElement>, "name">) {
  const { register } = useFormContext();
  const f = useField(name);
  return (
    <FieldFrame f={f} label={<label htmlFor={f.id}>{label}</label>} hint={hint}>
      <input {...textControl(f, hint)} {...input} {...register(name)} />
    </FieldFrame>
  );
}

/** A labelled <textarea> (several lines); its length limit is the contract's. */
export function TextAreaField({ name, label, hint, ...textarea }: { name: string; label: string; hint?: ReactNode } & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "name">) {
  const { register } = useFormContext();
  const f = useField(name);
  return (
    <FieldFrame f={f} label={<label htmlFor={f.id}>{label}</label>} hint={hint}>
      <textarea {...textControl(f, hint)} {...textarea} {...register(name)} />
    </FieldFrame>
  );
}

/** One yes-or-no field: a Radix checkbox and its label (the value is a boolean). */
export function CheckboxField({ name, label, hint }: { name: string; label: string; hint?: ReactNode }) {
  const { control } = useFormContext();
  const f = useField(name);
  return (
    <FieldFrame f={f} hint={hint}>
      <div className="choice">
        <Controller
          control={control}
          name={name}
          render={({ field }) => (
            <Checkbox.Root
              ref={field.ref}
              id={f.id}
              className="checkbox"
              checked={field.value === true}
              onCheckedChange={(checked) => field.onChange(checked === true)}
              onBlur={field.onBlur}
              aria-invalid={f.error ? true : undefined}
              aria-describedby={describedBy(hint !== undefined && f.hintId, f.error && f.errorId)}
            >
              <Checkbox.Indicator className="checkbox-mark">✓</Checkbox.Indicator>
            </Checkbox.Root>
          )}
        />
        <label htmlFor={f.id}>{label}</label>
      </div>
    </FieldFrame>
  );
}

/** A labelled <select>. */
export function SelectField({
  name,
  label,
  options,
  ...select
}: { name: string; label: string; options: readonly { value: string; label: string }[] } & Omit<SelectHTMLAttributes<HTMLSelectElement>, "name">) {
  const { register } = useFormContext();
  const f = useField(name);
  return (
    <FieldFrame f={f} label={<label htmlFor={f.id}>{label}</label>}>
      <select id={f.id} aria-invalid={f.error ? true : undefined} aria-describedby={describedBy(f.error && f.errorId)} {...select} {...register(name)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

/** A field drawn by its own control (the role picker), given its value and how to change it. */
export function ControlledField<T>({ name, render }: { name: string; render: (value: T, onChange: (value: T) => void) => ReactNode }) {
  const { control } = useFormContext();
  const f = useField(name);
  return (
    <FieldFrame f={f}>
      <Controller control={control} name={name} render={({ field }) => <>{render(field.value as T, field.onChange)}</>} />
    </FieldFrame>
  );
}

/** The form's problem that belongs to no field of it (the server's words). */
export function FormAlert() {
  const { formState } = useFormContext();
  const message = formState.errors.root?.server?.message;
  if (!message) return null;
  return (
    <p role="alert" className="error">
      {message}
    </p>
  );
}

/** The form's main button, busy while the request is under way. */
export function Submit({ children, pending, className = "button button-primary" }: { children: ReactNode; pending: string; className?: string }) {
  const { formState } = useFormContext();
  return (
    <button type="submit" className={className} disabled={formState.isSubmitting}>
      {formState.isSubmitting ? pending : children}
    </button>
  );
}
