import type { MikroORM } from "@mikro-orm/postgresql";
import type { ContactDirectory, ContactRef, KnownContact } from "../../../capabilities/conversions/index.ts";
import { ContactSchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

/**
 * The conversions' ContactDirectory port, read straight from the contacts
 * capability's table (`contact`, Migration20251123010000_contacts) through
 * MikroORM, each lookup on its own EntityManager fork: by id, or by the
 * matching key of the address (email_normalized, the same lower-cased form
 * conversions compute), through its unique index.
 *
 * customerRef: contacts carry no customer reference today, so a conversion
 * identified by customerRef has no known contact; it is recorded with its
 * customerRef and left unattributed (no click carries a customerRef
 * either). When contacts gain customer references, this is the one place
 * to resolve them.
 */
export class PostgresContactDirectory implements ContactDirectory {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async findContact(companyId: string, ref: ContactRef): Promise<KnownContact | undefined> {
    if (ref.kind === "customerRef") return undefined;
    // The capability checks contact ids; a non-UUID id names no contact rather than failing the query.
    if (ref.kind === "contactId" && !isUuid(ref.contactId)) return undefined;
    const where =
      ref.kind === "contactId" ? { company: companyId, id: ref.contactId } : { company: companyId, emailNormalized: ref.email };
    const found = await this.#orm.em.fork().findOne(ContactSchema, where, { fields: ["id", "emailNormalized"] });
    return found ? { id: found.id, email: found.emailNormalized } : undefined;
  }
}
