/**
 * The audit log: every administrative change of a company,
 * written in the same transaction as the change, with who made it and from
 * where. Never a secret: `details` holds names, scopes and roles only.
 */

/** Who made a change: a member (by email), an API key (by prefix), the operator, or the service itself (e.g. the sending guard). */
export type AuditActorKind = "member" | "api_key" | "operator" | "system";

export interface AuditActor {
  readonly kind: AuditActorKind;
  /** A member's email, a key's prefix, `operator`, or the part of the service that acted (`sending guard`). */
  readonly label: string;
}

/** Where a change came from: the actor and the request that carried it. */
export interface AuditContext {
  readonly actor: AuditActor;
  readonly requestId: string;
  /** The client address; empty when unknown. */
  readonly clientIp: string;
}

export type AuditAction =
  | "api_key.created"
  | "api_key.rotated"
  | "api_key.revoked"
  | "member.invited"
  | "member.updated"
  | "member.removed"
  | "member.sessions_ended"
  | "member.sign_in_link_created"
  | "member.sign_in_link_emailed"
  | "contact_list.created"
  | "contact_list.renamed"
  | "contact_list.deleted"
  | "webhook.created"
  | "webhook.updated"
  | "webhook.deleted"
  | "webhook.secret_rotated"
  | "sending_domain.created"
  | "sending_domain.verified"
  | "sending_domain.deleted"
  | "sender.created"
  | "sender.made_default"
  | "sender.removed"
  | "template.put"
  | "template.restored"
  | "template.deleted"
  | "template.test_sent"
  | "webhook_delivery.retried"
  | "webhook_delivery.dead_letters_retried"
  | "signup_form.created"
  | "signup_form.deactivated"
  | "suppression.added"
  | "suppression.removed"
  | "sending.suspended"
  | "sending.suspension_lifted"
  | "campaign.created"
  | "campaign.updated"
  | "campaign.scheduled"
  | "campaign.paused"
  | "campaign.resumed"
  | "campaign.cancelled";

/** One row to write, with the change, in its transaction. */
export interface AuditEntry {
  readonly context: AuditContext;
  readonly action: AuditAction;
  readonly targetType: "api_key" | "member" | "contact_list" | "webhook_endpoint" | "sending_domain" | "sender" | "template" | "webhook_delivery" | "signup_form" | "suppression" | "company" | "campaign";
  readonly targetId: string;
  /** Secret-free facts about the change (names, scopes, roles). */
  readonly details: Readonly<Record<string, string | number | boolean | null | readonly string[]>>;
}

/** An audit row as read back. */
export interface AuditEventRecord {
  readonly id: string;
  readonly companyId: string;
  readonly occurredAt: Date;
  readonly actorKind: AuditActorKind;
  readonly actor: string;
  readonly action: string;
  readonly targetType: string;
  readonly targetId: string;
  readonly requestId: string;
  readonly clientIp: string;
  readonly details: Record<string, unknown>;
}

/** An audit row whose target the store fills in (the row it changed). */
export type AuditNote = Omit<AuditEntry, "targetType" | "targetId">;

/** An operator acting for a company through the company services. */
export const OPERATOR_ACTOR: AuditActor = { kind: "operator", label: "operator" };
