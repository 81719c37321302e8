import type { Pool } from "../sql.ts";
import { toDate } from "../sql.ts";
import type { SignupFormStore } from "../../../capabilities/forms/ports.ts";
import { type FormField, SIGNUP_CONSENT_PREFIX, type SignupFormRecord } from "../../../capabilities/forms/types.ts";
import { auditValues } from "../audit/audit-rows.ts";

type Db = () => Promise<Pool>;

interface SignupFormRow {
  id: string;
  company_id: string;
  public_id: string;
  name: string;
  fields: FormField[];
  consent_text: string;
  consent_version: number;
  double_opt_in: boolean;
  language: string;
  active: boolean;
  created_at: string | Date;
  updated_at: string | Date;
}

const COLUMNS = `id, company_id, public_id, name, fields, consent_text, consent_version, double_opt_in, language, active, created_at, updated_at`;

function formRecord(row: SignupFormRow): SignupFormRecord {
  return {
    id: row.id,
    companyId: row.company_id,
    publicId: row.public_id,
    name: row.name,
    fields: row.fields,
    consentText: row.consent_text,
    consentVersion: row.consent_version,
    doubleOptIn: row.double_opt_in,
    language: row.language,
    active: row.active,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/**
 * The SignupFormStore port on PostgreSQL (table signup_form): single
 * statements on the pg pool. The public id is unique over all companies;
 * a collision answers `taken` (`on conflict do nothing`) so the capability
 * draws another id.
 */
export function postgresSignupFormStore(db: Db): SignupFormStore {
  return {
    async create(companyId, publicId, form, audit) {
      const pool = await db();
      // The audit row (when asked) by the same statement: it exists exactly when the form does.
      const { rows } = await pool.query<SignupFormRow>(
        `with created as (
           insert into signup_form (company_id, public_id, name, fields, consent_text, double_opt_in, language)
           values ($1, $2, $3, $4::jsonb, $5, $6, $7)
           on conflict (public_id) do nothing
           returning ${COLUMNS}
         ), audited as (
           insert into audit_event (company_id, actor_kind, actor, action, target_type, target_id, request_id, client_ip, details)
           select $1, $8, $9, $10, 'signup_form', created.public_id, $11, $12, $13::jsonb from created where $8::text is not null
         )
         select ${COLUMNS} from created`,
        [companyId, publicId, form.name, JSON.stringify(form.fields), form.consentText, form.doubleOptIn, form.language, ...auditValues(audit)],
      );
      const row = rows[0];
      return row ? formRecord(row) : "taken";
    },

    async deactivate(companyId, publicId, audit) {
      const pool = await db();
      // Only an active form changes (and gets a new updated_at); an inactive one is answered as it is.
      // The audit row (when asked) by the same statement, only for a change.
      const { rows } = await pool.query<SignupFormRow>(
        `with changed as (
           update signup_form set active = false, updated_at = now()
            where company_id = $1 and public_id = $2 and active
           returning ${COLUMNS}
         ), audited as (
           insert into audit_event (company_id, actor_kind, actor, action, target_type, target_id, request_id, client_ip, details)
           select $1, $3, $4, $5, 'signup_form', changed.public_id, $6, $7, $8::jsonb from changed where $3::text is not null
         )
         select ${COLUMNS} from changed
         union all
         select ${COLUMNS} from signup_form
          where company_id = $1 and public_id = $2 and not exists (select 1 from changed)`,
        [companyId, publicId, ...auditValues(audit)],
      );
      const row = rows[0];
      return row ? formRecord(row) : undefined;
    },

    async listActive(companyId) {
      const pool = await db();
      const { rows } = await pool.query<SignupFormRow>(
        `select ${COLUMNS} from signup_form where company_id = $1 and active order by created_at, id`,
        [companyId],
      );
      return rows.map(formRecord);
    },

    async countSignups(companyId, since, until) {
      const pool = await db();
      // The prefix is the capability's constant, written as a literal so that the planner matches the predicate of
      // contact_form_consent_index (consent_source LIKE 'form:%'): one range of it per form.
      const { rows } = await pool.query<{ public_id: string; signups: number }>(
        `select f.public_id, count(*)::int as signups
           from signup_form f
           join contact c on c.company_id = f.company_id and c.consent_source = '${SIGNUP_CONSENT_PREFIX}' || f.public_id
          where f.company_id = $1 and c.company_id = $1
            and c.consent_source like '${SIGNUP_CONSENT_PREFIX}%'
            and ($2::timestamptz is null or c.consent_at >= $2)
            and ($3::timestamptz is null or c.consent_at < $3)
          group by f.public_id
          order by f.public_id collate "C"`,
        [companyId, since ?? null, until ?? null],
      );
      return rows.map((row) => ({ publicId: row.public_id, signups: row.signups }));
    },

    async findByPublicId(publicId) {
      const pool = await db();
      const { rows } = await pool.query<SignupFormRow>(`select ${COLUMNS} from signup_form where public_id = $1`, [publicId]);
      const row = rows[0];
      return row ? formRecord(row) : undefined;
    },
  };
}
