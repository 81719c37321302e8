/**
 * The scopes an API key can carry (spec, Authentication). Stored on the key
 * as given here; transports map each endpoint to the one it needs.
 */
export const API_KEY_SCOPES = [
  "mail.transactional.send",
  "mail.events.read",
  "mail.contacts.read",
  "mail.contacts.write",
  "mail.conversions.write",
  "mail.integrations.write",
  // Mail administration through the API: webhook endpoints and deliveries
  // (spec: "Creating, editing and deleting webhooks needs Mail administration").
  "mail.admin",
] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

const KNOWN: ReadonlySet<string> = new Set(API_KEY_SCOPES);

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return KNOWN.has(value);
}
