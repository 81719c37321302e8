import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { SendingDomainSchema } from "./sending-domain.ts";
import { SENDERS_CHANNEL } from "./notify-channels.ts";
import { notifyTrigger } from "./notify-trigger.ts";

/**
 * A sender address (`receipts@example.com`) on one of the company's sending
 * domains. At most one sender per company is the default: a partial unique
 * index (`sender_one_default_per_company`) holds that even under concurrent
 * switches. Table `sender`.
 */
export const SenderSchema = defineEntity({
  name: "Sender",
  tableName: "sender",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("sender_company_id_fkey"),
    domain: () =>
      p.manyToOne(SendingDomainSchema).fieldName("domain_id").deleteRule("cascade").foreignKeyName("sender_domain_id_fkey"),
    /** Local part as written, domain part lower-cased. */
    email: p.text(),
    name: p.text().nullable(),
    isDefault: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  uniques: [
    { properties: ["company", "email"], name: "sender_company_id_email_key" },
    { properties: "company", name: "sender_one_default_per_company", where: "is_default" },
  ],
  // Tells the API processes' cached sender checks that senders changed (Migration20251126000000_sender_change_notices).
  triggers: [
    notifyTrigger({ table: "sender", name: "sender_senders_changed", channel: SENDERS_CHANNEL, events: ["insert", "update", "delete"] }),
  ],
});

export type Sender = InferEntity<typeof SenderSchema>;
