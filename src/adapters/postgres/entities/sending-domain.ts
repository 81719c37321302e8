import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { SENDERS_CHANNEL } from "./notify-channels.ts";
import { notifyTrigger } from "./notify-trigger.ts";
import type { DnsRecordCheck } from "../../../capabilities/sending-setup/dns-records.ts";

/**
 * A company's sending domain (`example.com`) with its DKIM key and the state
 * of the last DNS check. `dkimPrivateKeySealed` is the PEM sealed with
 * AES-256-GCM (src/capabilities/sending-setup/key-sealing.ts): the database never
 * holds a usable signing key. Table `sending_domain`; the DDL is in
 * ../migrations/Migration20251122000000_sending.ts.
 */
export const SendingDomainSchema = defineEntity({
  name: "SendingDomain",
  tableName: "sending_domain",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("sending_domain_company_id_fkey"),
    domain: p.text(),
    /** The custom MAIL FROM domain, `bounces.<domain>`. */
    returnPathDomain: p.text(),
    dkimSelector: p.text(),
    /** Base64 DER (SubjectPublicKeyInfo), exactly the `p=` of the DKIM record. */
    dkimPublicKey: p.text(),
    dkimPrivateKeySealed: p.text(),
    dkimVerified: p.boolean().default(false),
    spfVerified: p.boolean().default(false),
    dmarcVerified: p.boolean().default(false),
    verificationOverridden: p.boolean().default(false),
    lastCheckedAt: p.datetime().nullable(),
    /** Each record as the last check saw it (purpose, state, what DNS returned); null before the first check. */
    dnsCheck: p.json<DnsRecordCheck[]>().columnType("jsonb").nullable(),
    /** First verified (every record found, or overridden); null while pending. Its senders may send from then on. */
    verifiedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  uniques: [{ properties: ["company", "domain"], name: "sending_domain_company_id_domain_key" }],
  // Tells the API processes' cached sender checks that a domain changed (Migration20251126000000_sender_change_notices).
  triggers: [
    notifyTrigger({ table: "sending_domain", name: "sending_domain_senders_changed", channel: SENDERS_CHANNEL, events: ["update", "delete"] }),
  ],
});

export type SendingDomain = InferEntity<typeof SendingDomainSchema>;
