import type { MigrationObject } from "@mikro-orm/core";
import { Migration20251121000000_accounts } from "./Migration20251121000000_accounts.ts";
import { Migration20251122000000_sending } from "./Migration20251122000000_sending.ts";
import { Migration20251122010000_simulator_journal } from "./Migration20251122010000_simulator_journal.ts";
import { Migration20251123000000_webhooks } from "./Migration20251123000000_webhooks.ts";
import { Migration20251123010000_contacts } from "./Migration20251123010000_contacts.ts";
import { Migration20251123020000_conversions } from "./Migration20251123020000_conversions.ts";
import { Migration20251123030000_forms } from "./Migration20251123030000_forms.ts";
import { Migration20251123040000_integrations } from "./Migration20251123040000_integrations.ts";
import { Migration20251124000000_message_request_fingerprint } from "./Migration20251124000000_message_request_fingerprint.ts";
import { Migration20251124173000_simulator_events } from "./Migration20251124173000_simulator_events.ts";
import { Migration20251125200000_credential_change_notices } from "./Migration20251125200000_credential_change_notices.ts";
import { Migration20251126000000_sender_change_notices } from "./Migration20251126000000_sender_change_notices.ts";
import { Migration20251127000000_signup_door } from "./Migration20251127000000_signup_door.ts";
import { Migration20251128000000_webhook_bounds } from "./Migration20251128000000_webhook_bounds.ts";
import { Migration20251129000000_members_sessions_audit } from "./Migration20251129000000_members_sessions_audit.ts";
import { Migration20251130000000_delivery_reports } from "./Migration20251130000000_delivery_reports.ts";
import { Migration20251201000000_webhook_work_notices } from "./Migration20251201000000_webhook_work_notices.ts";
import { Migration20251202000000_handoff_lease } from "./Migration20251202000000_handoff_lease.ts";
import { Migration20251203000000_system_mail } from "./Migration20251203000000_system_mail.ts";
import { Migration20261127022946_handoff_token } from "./Migration20261127022946_handoff_token.ts";
import { Migration20261127024049_delivery_report_kinds } from "./Migration20261127024049_delivery_report_kinds.ts";
import { Migration20261127030109_crm_screen_reads } from "./Migration20261127030109_crm_screen_reads.ts";
import { Migration20261127031500_suppression_list_index } from "./Migration20261127031500_suppression_list_index.ts";
import { Migration20261127032000_webhook_live_notices } from "./Migration20261127032000_webhook_live_notices.ts";
import { Migration20261127040000_message_attachments } from "./Migration20261127040000_message_attachments.ts";
import { Migration20261127043224_sending_guard } from "./Migration20261127043224_sending_guard.ts";
import { Migration20261127043711_tracking } from "./Migration20261127043711_tracking.ts";
import { Migration20261127044010_campaigns } from "./Migration20261127044010_campaigns.ts";
import { Migration20261127050000_domain_checks } from "./Migration20261127050000_domain_checks.ts";
import { Migration20261127050000_message_stats } from "./Migration20261127050000_message_stats.ts";
import { Migration20261127044355_template_versions } from "./Migration20261127044355_template_versions.ts";
import { Migration20261127103103_message_stats_pending } from "./Migration20261127103103_message_stats_pending.ts";

/**
 * Every migration, oldest first. Listed explicitly instead of found by a
 * folder glob so they load under plain Node type stripping (no TS loader)
 * and so a stray file cannot change what runs. A new migration is a new file
 * here plus one line at the end of this list; `npm run migration:create --
 * <name>` generates it from the entities and adds the line (../migrate.ts).
 * `name` is what the `mikro_orm_migrations` table records: never rename a
 * migration that shipped.
 */
export const MIGRATIONS: readonly MigrationObject[] = [
  { name: "Migration20251121000000_accounts", class: Migration20251121000000_accounts },
  { name: "Migration20251122000000_sending", class: Migration20251122000000_sending },
  { name: "Migration20251122010000_simulator_journal", class: Migration20251122010000_simulator_journal },
  { name: "Migration20251123000000_webhooks", class: Migration20251123000000_webhooks },
  { name: "Migration20251123010000_contacts", class: Migration20251123010000_contacts },
  { name: "Migration20251123020000_conversions", class: Migration20251123020000_conversions },
  { name: "Migration20251123030000_forms", class: Migration20251123030000_forms },
  { name: "Migration20251123040000_integrations", class: Migration20251123040000_integrations },
  { name: "Migration20251124000000_message_request_fingerprint", class: Migration20251124000000_message_request_fingerprint },
  { name: "Migration20251124173000_simulator_events", class: Migration20251124173000_simulator_events },
  { name: "Migration20251125200000_credential_change_notices", class: Migration20251125200000_credential_change_notices },
  { name: "Migration20251126000000_sender_change_notices", class: Migration20251126000000_sender_change_notices },
  { name: "Migration20251127000000_signup_door", class: Migration20251127000000_signup_door },
  { name: "Migration20251128000000_webhook_bounds", class: Migration20251128000000_webhook_bounds },
  { name: "Migration20251129000000_members_sessions_audit", class: Migration20251129000000_members_sessions_audit },
  { name: "Migration20251130000000_delivery_reports", class: Migration20251130000000_delivery_reports },
  { name: "Migration20251201000000_webhook_work_notices", class: Migration20251201000000_webhook_work_notices },
  { name: "Migration20251202000000_handoff_lease", class: Migration20251202000000_handoff_lease },
  { name: "Migration20251203000000_system_mail", class: Migration20251203000000_system_mail },
  { name: "Migration20261127022946_handoff_token", class: Migration20261127022946_handoff_token },
  { name: "Migration20261127024049_delivery_report_kinds", class: Migration20261127024049_delivery_report_kinds },
  { name: "Migration20261127030109_crm_screen_reads", class: Migration20261127030109_crm_screen_reads },
  { name: "Migration20261127031500_suppression_list_index", class: Migration20261127031500_suppression_list_index },
  { name: "Migration20261127032000_webhook_live_notices", class: Migration20261127032000_webhook_live_notices },
  { name: "Migration20261127040000_message_attachments", class: Migration20261127040000_message_attachments },
  { name: "Migration20261127043224_sending_guard", class: Migration20261127043224_sending_guard },
  { name: "Migration20261127043711_tracking", class: Migration20261127043711_tracking },
  { name: "Migration20261127044010_campaigns", class: Migration20261127044010_campaigns },
  { name: "Migration20261127050000_domain_checks", class: Migration20261127050000_domain_checks },
  { name: "Migration20261127050000_message_stats", class: Migration20261127050000_message_stats },
  { name: "Migration20261127044355_template_versions", class: Migration20261127044355_template_versions },
  { name: "Migration20261127103103_message_stats_pending", class: Migration20261127103103_message_stats_pending },
];
