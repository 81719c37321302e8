import type { MikroORM } from "@mikro-orm/postgresql";
import type { CompanyDirectory } from "../../../capabilities/sending-setup/ports.ts";
import { CompanySchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

/** Companies as the sending setup sees them: whether one exists, and its id as stored. */
export class PostgresCompanyDirectory implements CompanyDirectory {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async findCompanyId(companyId: string): Promise<string | null> {
    if (!isUuid(companyId)) return null;
    const company = await this.#orm.em.fork().findOne(CompanySchema, { id: companyId }, { fields: ["id"] });
    return company?.id ?? null;
  }
}
