import type { ServiceImpl } from "@connectrpc/connect";
import { ApiError } from "../../../contract/api-error.ts";
import type { AccountsService } from "../../../domain/accounts/index.ts";
import { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { accountsAdmin } from "./accounts-admin.ts";

/**
 * The AdminService: operators and internal services (token-guarded by the
 * auth interceptor; gRPC/Connect only). One module per capability; this
 * file only puts them together.
 */
export interface AdminDependencies {
  readonly accounts: AccountsService;
}

function notImplemented(rpc: string): () => never {
  return () => {
    throw new ApiError("NOT_IMPLEMENTED", `${rpc} is part of the contract but not implemented yet.`);
  };
}

export function adminServiceImpl(deps: AdminDependencies): ServiceImpl<typeof AdminService> {
  const pending = Object.fromEntries(
    AdminService.methods.map((m) => [m.localName, notImplemented(m.name)]),
  ) as unknown as ServiceImpl<typeof AdminService>;
  return {
    ...pending,
    ...accountsAdmin(deps.accounts),
  };
}
