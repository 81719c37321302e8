import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { ApiKeySchema } from "./api-key.ts";
import { CompanySchema } from "./company.ts";
import { SenderSchema } from "./sender.ts";

/**
 * One message accepted for sending, and its current status. Written by raw
 * SQL (src/adapters/postgres/messages/message-store.ts: every status move
 * together with its message_event and webhook_event rows in one
 * transaction); the entity exists so the ORM metadata describes the schema.
 * Table `message`; the DDL is in ../migrations/Migration20251122000000_sending.ts.
 */
export const MessageSchema = defineEntity({
  name: "Message",
  tableName: "message",
  properties: {
    // No generator and no column default: the id is chosen before the row
    // exists (it is the id returned to the caller and the workflow's id).
    id: p.uuid().primary(),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("message_company_id_fkey"),
    /** The key that sent it; the log outlives a deleted key. */
    apiKey: () =>
      p.manyToOne(ApiKeySchema).nullable().fieldName("api_key_id").deleteRule("set null").foreignKeyName("message_api_key_id_fkey"),
    idempotencyKey: p.text().nullable(),
    /** Fingerprint of the send that created it, kept with its idempotency key (../migrations/Migration20251124000000_message_request_fingerprint.ts). */
    requestFingerprint: p.blob().nullable(),
    recipient: p.text(),
    recipientName: p.text().nullable(),
    recipientDomain: p.text(),
    sender: () =>
      p.manyToOne(SenderSchema).nullable().fieldName("sender_id").deleteRule("set null").foreignKeyName("message_sender_id_fkey"),
    fromEmail: p.text(),
    fromName: p.text().nullable(),
    replyTo: p.text().nullable(),
    subject: p.text(),
    html: p.text().nullable(),
    // `text` would read as a column type in SQL; the column is text_body.
    text: p.text().nullable().fieldName("text_body"),
    // No foreign key: the message keeps its rendered content, so deleting
    // the template must not touch the log.
    templateId: p.uuid().nullable(),
    tags: p.json<Record<string, string>>().columnType("jsonb").defaultRaw("'{}'"),
    status: p.text(),
    errorCode: p.text().nullable(),
    provider: p.text().nullable(),
    providerMessageId: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    sentAt: p.datetime().nullable(),
    lastEventAt: p.datetime().nullable(),
    /** Outbox marker: null until the message's workflow is known to exist. */
    workflowStartedAt: p.datetime().nullable(),
    /** The lease of the handoff attempt under way: no other attempt sends the message before it ends (MessageStore.claimHandoff). */
    handoffUntil: p.datetime().nullable(),
    /** Whose lease it is: the claiming attempt's random token; only that attempt renews or releases it. */
    handoffToken: p.uuid().nullable(),
    /** The service's own mail (sign-in links, confirmations): html and text_body are sealed, and no read shows them. */
    system: p.boolean().default(false),
    /**
     * When its content (html, text_body, attachments) was deleted, past
     * MESSAGE_CONTENT_RETENTION_DAYS (messages/content-retention.ts); null while it is kept.
     */
    contentRemovedAt: p.datetime().nullable(),
    /** A campaign's copy: the campaign (its id is the campaign recipient's); null for a transactional message. */
    campaignId: p.uuid().nullable(),
    /** A campaign copy's contact. */
    contactId: p.uuid().nullable(),
    /** Headers added to the copy and covered by its DKIM signature (List-Unsubscribe); null: none. */
    extraHeaders: p.json<Record<string, string>>().columnType("jsonb").nullable(),
  },
  uniques: [
    { properties: ["company", "idempotencyKey"], name: "message_company_id_idempotency_key_key" },
    {
      properties: ["provider", "providerMessageId"],
      name: "message_provider_id_index",
      where: "provider_message_id IS NOT NULL",
    },
  ],
  // Raw DDL (exactly as pg_indexes shows it) where the ORM cannot describe the
  // index: raw indexes are compared by name only. The keyset indexes need it
  // because MikroORM 7.2 introspection matches "id" inside "company_id" and
  // loses the second DESC, so a structured `columns` declaration would diff
  // forever.
  indexes: [
    {
      name: "message_log_index",
      expression: "CREATE INDEX message_log_index ON public.message USING btree (company_id, created_at DESC, id DESC)",
    },
    {
      name: "message_log_status_index",
      expression: "CREATE INDEX message_log_status_index ON public.message USING btree (company_id, status, created_at DESC, id DESC)",
    },
    // One address's messages, newest first (the recipient filter: a contact's page).
    {
      name: "message_recipient_index",
      expression: "CREATE INDEX message_recipient_index ON public.message USING btree (company_id, lower(recipient), created_at DESC, id DESC)",
    },
    { properties: "tags", name: "message_tags_index", type: "gin" },
    // The sending guard counts a company's sends of the last 24 hours and how many bounced or drew a complaint (status from the index).
    {
      name: "message_sent_index",
      expression: "CREATE INDEX message_sent_index ON public.message USING btree (company_id, sent_at) INCLUDE (status) WHERE (sent_at IS NOT NULL)",
    },
    // The relay finds messages whose workflow was never started.
    { properties: "createdAt", name: "message_unstarted_index", where: "workflow_started_at IS NULL" },
    // The content retention finds the oldest messages whose content is still kept.
    { properties: "createdAt", name: "message_content_kept_index", where: "content_removed_at IS NULL" },
  ],
});

export type Message = InferEntity<typeof MessageSchema>;
