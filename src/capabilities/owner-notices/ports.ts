/** The addresses of a company's active owners (enabled members with the owner role). */
export interface OwnerDirectory {
  activeOwners(query: { readonly companyId: string }): Promise<readonly string[]>;
}

/** One email of the service's own, sent as the system sender company's system mail (sealed, withheld from reads). */
export interface SystemMail {
  readonly to: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  /** Names the email for the system company: a second send with the same key sends nothing. */
  readonly idempotencyKey: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Sends the service's own mail from the system sender company (SYSTEM_SENDER_COMPANY_ID). */
export interface SystemMailer {
  send(mail: SystemMail): Promise<{ readonly replayed: boolean }>;
}
