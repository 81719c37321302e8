import { raw, type EntityManager, type MikroORM } from "@mikro-orm/postgresql";
import type { SignupFormStore } from "../../../capabilities/forms/ports.ts";
import { type FormField, SIGNUP_CONSENT_PREFIX, type SignupFormRecord } from "../../../capabilities/forms/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import { SignupFormSchema, type SignupForm } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

function formRecord(form: SignupForm): SignupFormRecord {
  return {
    id: form.id,
    companyId: form.company.id,
    publicId: form.publicId,
    name: form.name,
    // The column holds what create wrote: the validated form's fields.
    fields: form.fields as FormField[],
    consentText: form.consentText,
    consentVersion: form.consentVersion,
    doubleOptIn: form.doubleOptIn,
    language: form.language,
    active: form.active,
    createdAt: form.createdAt,
    updatedAt: form.updatedAt,
  };
}

/**
 * The SignupFormStore port on PostgreSQL (table signup_form) through
 * MikroORM, each call on its own EntityManager fork. The public id is
 * unique over all companies; a collision answers `taken` (`on conflict do
 * nothing`) so the capability draws another id.
 */
export function postgresSignupFormStore(orm: MikroORM): SignupFormStore {
  const fork = (): EntityManager => orm.em.fork();
  return {
    async create(companyId, publicId, form, audit) {
      return fork().transactional(async (em) => {
        // `on conflict do nothing` rather than a caught unique violation: a public id taken (also by a concurrent
        // create) leaves the transaction usable and writes nothing. Id and times are the database's defaults.
        const inserted = await em
          .createQueryBuilder(SignupFormSchema)
          .insert({
            company: companyId,
            publicId,
            name: form.name,
            fields: [...form.fields],
            consentText: form.consentText,
            doubleOptIn: form.doubleOptIn,
            language: form.language,
          })
          .onConflict("publicId")
          .ignore()
          .execute("run");
        if (inserted.affectedRows === 0) return "taken" as const;
        const created = await em.findOneOrFail(SignupFormSchema, { company: companyId, publicId });
        // The audit row in the same transaction: it exists exactly when the form does.
        if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "signup_form", targetId: publicId });
        await em.flush();
        return formRecord(created);
      });
    },

    async deactivate(companyId, publicId, audit) {
      if (!isUuid(companyId)) return undefined;
      return fork().transactional(async (em) => {
        // Only an active form changes (and gets a new updated_at); an inactive one is answered as it is. A
        // conditional update: of racing deactivations exactly one changes the form, and only it writes the audit row.
        const changed = await em.nativeUpdate(SignupFormSchema, { company: companyId, publicId, active: true }, { active: false, updatedAt: raw("now()") });
        if (changed > 0 && audit) persistAuditRow(em, companyId, { ...audit, targetType: "signup_form", targetId: publicId });
        const found = await em.findOne(SignupFormSchema, { company: companyId, publicId });
        await em.flush();
        return found ? formRecord(found) : undefined;
      });
    },

    async listActive(companyId) {
      if (!isUuid(companyId)) return [];
      const forms = await fork().find(SignupFormSchema, { company: companyId, active: true }, { orderBy: { createdAt: "asc", id: "asc" } });
      return forms.map(formRecord);
    },

    async countSignups(companyId, since, until) {
      if (!isUuid(companyId)) return [];
      // One statement across the company's forms and contacts, written out: the join on the computed consent
      // source and the C-collated order have no query-builder form. The prefix is the capability's constant,
      // written as a literal so that the planner matches the predicate of contact_form_consent_index
      // (consent_source LIKE 'form:%'): one range of it per form.
      const rows = await fork().execute<{ public_id: string; signups: number }[]>(
        `select f.public_id, count(*)::int as signups
           from signup_form f
           join contact c on c.company_id = f.company_id and c.consent_source = '${SIGNUP_CONSENT_PREFIX}' || f.public_id
          where f.company_id = ? and c.company_id = ?
            and c.consent_source like '${SIGNUP_CONSENT_PREFIX}%'
            and (?::timestamptz is null or c.consent_at >= ?)
            and (?::timestamptz is null or c.consent_at < ?)
          group by f.public_id
          order by f.public_id collate "C"`,
        [companyId, companyId, since ?? null, since ?? null, until ?? null, until ?? null],
      );
      return rows.map((row) => ({ publicId: row.public_id, signups: row.signups }));
    },

    async findByPublicId(publicId) {
      const found = await fork().findOne(SignupFormSchema, { publicId });
      return found ? formRecord(found) : undefined;
    },
  };
}
