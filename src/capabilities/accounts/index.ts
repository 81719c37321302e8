export type { ApiKeyAuthenticator, AuthenticatedKey, CompanyEntitlements } from "./types.ts";
export type { ApiKeyStatus, ApiKeyView, CompanyView } from "./views.ts";
export type {
  AccountsStore,
  ApiKeyCredentials,
  ApiKeyRecord,
  ApiKeyReplacement,
  CompanyRecord,
  KeyAuditNote,
  KeyCredential,
  KeyUsageStore,
  NewApiKey,
  NewCompany,
  ReplacedApiKey,
} from "./ports.ts";
export {
  Companies,
  type CompaniesDependencies,
  type CreateCompanyCommand,
  type GetCompanyCommand,
  type SetEntitlementsCommand,
} from "./companies.ts";
export {
  ApiKeys,
  type ApiKeysDependencies,
  type CreateApiKeyCommand,
  type CreatedApiKey,
  type KeyChangeCommand,
  type ListApiKeysCommand,
  type ListApiKeysResult,
  type RevokeApiKeyCommand,
  type RotateApiKeyCommand,
  type RotatedApiKey,
  type SecretMintingCommand,
} from "./keys.ts";
export type { CredentialChangeHooks } from "./credential-changes.ts";
export { auditActorOf, grantableScopes, type Principal, type PrincipalActor } from "./principal.ts";
export { BearerKeyAuthenticator, type AuthenticatorOptions } from "./authenticator.ts";
export { KeyUsageBatcher, type KeyUsageBatcherOptions, type KeyUsageRecorder } from "./key-usage-batcher.ts";
export { API_KEY_SCOPES, isApiKeyScope, type ApiKeyScope } from "./scopes.ts";
