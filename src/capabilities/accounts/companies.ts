import { ApiError } from "../../contract/api-error.ts";
import { changingCredentials, type CredentialChangeHooks } from "./credential-changes.ts";
import type { AccountsStore, CompanyRecord } from "./ports.ts";
import type { CompanyEntitlements } from "./types.ts";
import { validEntitlements, validName } from "./validation.ts";
import { companyView, type CompanyView } from "./views.ts";

export interface CompaniesDependencies {
  readonly store: AccountsStore;
  /** Entitlement changes may refuse keys: the cached key lookups hear of them (credential-changes.ts). */
  readonly credentialChanges?: CredentialChangeHooks;
}

export interface CreateCompanyCommand {
  readonly name: string;
  /** Default: the mail API on, SMTP off. */
  readonly entitlements?: Partial<CompanyEntitlements> | undefined;
}

export interface GetCompanyCommand {
  readonly companyId: string;
}

export interface SetEntitlementsCommand {
  readonly companyId: string;
  /** The entitlements to change; the others keep their value. */
  readonly entitlements: Partial<CompanyEntitlements>;
}

/** Companies and their entitlements (the operator's: AdminService, mailctl). */
export class Companies {
  readonly #store: AccountsStore;
  readonly #credentialChanges: CredentialChangeHooks;

  constructor(dependencies: CompaniesDependencies) {
    this.#store = dependencies.store;
    this.#credentialChanges = dependencies.credentialChanges ?? {};
  }

  async create(command: CreateCompanyCommand): Promise<CompanyView> {
    const name = validName("name", command.name);
    const entitlements = validEntitlements("entitlements", command.entitlements ?? {});
    const company = await this.#store.createCompany({ name, entitlements: { api: entitlements.api ?? true, smtp: entitlements.smtp ?? false } });
    return companyView(company);
  }

  /** NOT_FOUND when there is no such company. */
  async get(command: GetCompanyCommand): Promise<CompanyView> {
    return companyView(await requireCompany(this.#store, command.companyId));
  }

  /** Every company, oldest first. */
  async list(): Promise<CompanyView[]> {
    return (await this.#store.listCompanies()).map(companyView);
  }

  async setEntitlements(command: SetEntitlementsCommand): Promise<CompanyView> {
    const entitlements = validEntitlements("entitlements", command.entitlements);
    const company = await changingCredentials(this.#credentialChanges, () => this.#store.updateEntitlements(command.companyId, entitlements));
    if (!company) throw noSuchCompany();
    return companyView(company);
  }
}

/** The company as stored, or NOT_FOUND. */
export async function requireCompany(store: Pick<AccountsStore, "findCompany">, companyId: string): Promise<CompanyRecord> {
  const company = await store.findCompany(companyId);
  if (!company) throw noSuchCompany();
  return company;
}

function noSuchCompany(): ApiError {
  return new ApiError("NOT_FOUND", "No such company.");
}
