import { useMutation } from "@connectrpc/connect-query";
import { CreateFormRequestSchema, SignupFormsService } from "@gen/mail/v1/forms_pb.js";
import { MailService } from "@gen/mail/v1/mail_pb.js";
import { useState } from "react";
import { useFieldArray, useFormContext, useWatch } from "react-hook-form";
import { Link } from "react-router";
import { z } from "zod/mini";
import { CopyField } from "../../components/admin/CopyButton.tsx";
import { DialogDone, FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { type FieldCheck, text, yesNo } from "../../components/form/contract-rules.ts";
import { CheckboxField, FieldError, Form, FormAlert, SelectField, Submit, TextAreaField, TextField, useContractForm, useField } from "../../components/form/Form.tsx";

/** One field of the design as the editor holds it: a select's options one per line. */
interface FieldRow {
  name: string;
  label: string;
  type: string;
  required: boolean;
  options: string;
}

/** The input types of a form field (the contract's FormField.type). */
const FIELD_TYPES = [
  { value: "text", label: "text" },
  { value: "email", label: "email" },
  { value: "checkbox", label: "checkbox" },
  { value: "select", label: "select (a list of choices)" },
];

/** The contract's rule for a form: at most 30 fields (CreateFormRequest.fields). */
const MAX_FIELDS = 30;

/** Every form asks for the address: its first field, always `email`, required; only its label is the company's. */
const EMAIL_ROW: FieldRow = { name: "email", label: "Email", type: "email", required: true, options: "" };
const NEW_ROW: FieldRow = { name: "", label: "", type: "text", required: false, options: "" };

/** A field name as the service takes it: a letter first, then letters, digits and `_`. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** The design's rows: what the screen can tell before sending (names, labels, a select's choices); the service says the rest. */
function fieldRows(): FieldCheck<FieldRow[]> {
  return () =>
    z.array(
      z
        .object({
          name: z.string().check(
            z.trim(),
            z.refine((value) => FIELD_NAME.test(value), "Start with a letter; use letters, digits and _ only."),
          ),
          label: z.string().check(
            z.trim(),
            z.refine((value) => value !== "", "Fill this in."),
          ),
          type: z.string(),
          required: z.boolean(),
          options: z.string(),
        })
        .check(z.refine((row) => row.type !== "select" || lines(row.options).length > 0, { error: "A select needs at least one choice.", path: ["options"] })),
    );
}

/** "New form": name, language, consent text, double opt-in and the fields; then the hosted page's address to copy. */
export function CreateForm() {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(MailService);
  const refreshCounts = useRefresh(SignupFormsService);
  const create = useMutation(SignupFormsService.method.createForm, {
    onSuccess: async () => {
      await refresh();
      await refreshCounts();
    },
  });
  const form = useContractForm({
    request: CreateFormRequestSchema,
    fields: { name: text(), language: text(), consentText: text(), doubleOptIn: yesNo(), fields: fieldRows() },
    defaults: { name: "", language: "en", consentText: "", doubleOptIn: true, fields: [EMAIL_ROW] },
  });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      form.reset();
      create.reset();
    }
  };
  const created = create.data?.form;
  return (
    <FormDialog label="New form" title={created ? "Form created" : "New sign-up form"} open={open} onOpenChange={openOrClose}>
      {created ? (
        <>
          <p role="status">The form {created.name} takes sign-ups now, on its hosted page.</p>
          <CopyField label="Hosted page address" value={created.url} />
          <DialogDone onDone={() => openOrClose(false)}>
            <Link to={`/forms/${encodeURIComponent(created.publicId)}`} onClick={() => openOrClose(false)}>
              Open the form and its HTML snippet
            </Link>
          </DialogDone>
        </>
      ) : (
        <Form
          form={form}
          className="form"
          onSubmit={({ name, language, consentText, doubleOptIn, fields }) =>
            create.mutateAsync({
              name,
              language,
              consentText,
              doubleOptIn,
              fields: fields.map((row) => ({
                name: row.name,
                label: row.label,
                type: row.type,
                required: row.required,
                options: row.type === "select" ? lines(row.options) : [],
              })),
            })
          }
        >
          <TextField name="name" label="Name" hint="The hosted page's title." autoComplete="off" />
          <TextField name="language" label="Language" hint="A language tag such as en, de, fr or es: the page's own words are in that language." autoComplete="off" />
          <FieldEditor />
          <TextAreaField name="consentText" label="Consent text" rows={3} hint="What the visitor agrees to, shown above the button and kept with each sign-up." />
          <CheckboxField
            name="doubleOptIn"
            label="Double opt-in"
            hint="A new address stays pending until its owner confirms from an email (one credit each, sent from your default sender)."
          />
          <FormAlert />
          <div className="actions">
            <Submit pending="Creating…">Create form</Submit>
          </div>
        </Form>
      )}
    </FormDialog>
  );
}

/** The design's fields, one group each: the address first (its label only), then the company's own, added and removed here. */
function FieldEditor() {
  const { control } = useFormContext<{ fields: FieldRow[] }>();
  const rows = useFieldArray({ control, name: "fields" });
  const whole = useField("fields");
  return (
    <fieldset className="choices choices-grouped" aria-describedby={whole.error ? whole.errorId : undefined}>
      <legend>Fields</legend>
      {rows.fields.map((row, index) =>
        index === 0 ? (
          <fieldset key={row.id} className="panel form">
            <legend>Field 1: the email address</legend>
            <p className="hint">Every form asks for the address (field name email, required).</p>
            <TextField name="fields.0.label" label="Label" autoComplete="off" />
          </fieldset>
        ) : (
          <FieldRowEditor key={row.id} index={index} onRemove={() => rows.remove(index)} />
        ),
      )}
      <FieldError id={whole.errorId} error={whole.error} />
      <div className="actions">
        <button type="button" className="button" onClick={() => rows.append({ ...NEW_ROW })} disabled={rows.fields.length >= MAX_FIELDS}>
          Add field
        </button>
      </div>
    </fieldset>
  );
}

function FieldRowEditor({ index, onRemove }: { index: number; onRemove: () => void }) {
  const at = `fields.${index}`;
  const type = useWatch<{ fields: FieldRow[] }>({ name: `fields.${index}.type` });
  return (
    <fieldset className="panel form">
      <legend>Field {index + 1}</legend>
      <TextField name={`${at}.name`} label="Name" hint="The name the value is sent under: firstName, lastName, company and phone fill the contact's own fields, any other becomes an attribute." autoComplete="off" />
      <TextField name={`${at}.label`} label="Label" autoComplete="off" />
      <SelectField name={`${at}.type`} label="Type" options={FIELD_TYPES} />
      {type === "select" ? <TextAreaField name={`${at}.options`} label="Choices, one per line" rows={3} /> : null}
      <CheckboxField name={`${at}.required`} label="Required" />
      <div className="actions">
        <button type="button" className="button button-danger" onClick={onRemove}>
          Remove field {index + 1}
        </button>
      </div>
    </fieldset>
  );
}
