import type { ContactDirectory, ContactRef, KnownContact } from "../../../capabilities/conversions/index.ts";
import type { Pool } from "../sql.ts";

type Db = () => Promise<Pool>;

/**
 * The conversions' ContactDirectory port, read straight from the contacts
 * capability's table (`contact`, Migration20251123010000_contacts): by id,
 * or by the matching key of the address (email_normalized, the same
 * lower-cased form conversions compute), through its unique index.
 *
 * customerRef: contacts carry no customer reference today, so a conversion
 * identified by customerRef has no known contact; it is recorded with its
 * customerRef and left unattributed (no click carries a customerRef
 * either). When contacts gain customer references, this is the one place
 * to resolve them.
 */
export class PostgresContactDirectory implements ContactDirectory {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async findContact(companyId: string, ref: ContactRef): Promise<KnownContact | undefined> {
    if (ref.kind === "customerRef") return undefined;
    const pool = await this.#db();
    const { rows } =
      ref.kind === "contactId"
        ? await pool.query<{ id: string; email_normalized: string }>(
            `select id, email_normalized from contact where company_id = $1 and id = $2`,
            [companyId, ref.contactId],
          )
        : await pool.query<{ id: string; email_normalized: string }>(
            `select id, email_normalized from contact where company_id = $1 and email_normalized = $2`,
            [companyId, ref.email],
          );
    const row = rows[0];
    return row ? { id: row.id, email: row.email_normalized } : undefined;
  }
}
