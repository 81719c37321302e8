import type { MikroORM } from "@mikro-orm/postgresql";
import type { OwnerDirectory } from "../../../capabilities/owner-notices/index.ts";
import { MemberSchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

/** The OwnerDirectory port through MikroORM: the enabled owners of one company, by address, each read on its own fork. */
export function postgresOwnerDirectory(orm: MikroORM): OwnerDirectory {
  return {
    async activeOwners({ companyId }) {
      if (!isUuid(companyId)) return [];
      const owners = await orm.em
        .fork()
        .find(MemberSchema, { company: companyId, role: "owner", disabledAt: null }, { fields: ["email"], orderBy: { email: "asc" } });
      return owners.map((owner) => owner.email);
    },
  };
}
