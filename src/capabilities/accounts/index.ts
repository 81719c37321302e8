export type { ApiKeyAuthenticator, AuthenticatedKey, CompanyEntitlements } from "./types.ts";
export type { ApiKeyStatus, ApiKeyView, CompanyView } from "./views.ts";
export type {
  AccountsStore,
  ApiKeyCredentials,
  ApiKeyRecord,
  ApiKeyReplacement,
  CompanyRecord,
  KeyCredential,
  KeyUsageStore,
  NewApiKey,
  NewCompany,
  ReplacedApiKey,
} from "./ports.ts";
export { AccountsService, type AccountsServiceOptions, type CreatedApiKey, type RotatedApiKey } from "./accounts-service.ts";
export { BearerKeyAuthenticator, type AuthenticatorOptions } from "./authenticator.ts";
export { KeyUsageBatcher, type KeyUsageBatcherOptions, type KeyUsageRecorder } from "./key-usage-batcher.ts";
export { API_KEY_SCOPES, isApiKeyScope, type ApiKeyScope } from "./scopes.ts";
