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
  AccountsService,
  type AccountsServiceOptions,
  type CreateApiKeyCommand,
  type CreatedApiKey,
  type KeyAdminCommand,
  type RevokeApiKeyCommand,
  type RotateApiKeyCommand,
  type RotatedApiKey,
} from "./accounts-service.ts";
export { auditActorOf, type Principal, type PrincipalActor } from "./principal.ts";
export { BearerKeyAuthenticator, type AuthenticatorOptions } from "./authenticator.ts";
export { KeyUsageBatcher, type KeyUsageBatcherOptions, type KeyUsageRecorder } from "./key-usage-batcher.ts";
export { API_KEY_SCOPES, isApiKeyScope, type ApiKeyScope } from "./scopes.ts";
