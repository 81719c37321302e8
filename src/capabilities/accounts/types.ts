/**
 * What the transports know of accounts; they depend on these types only.
 * What the capability needs from storage is in ports.ts.
 */
export interface CompanyEntitlements {
  readonly api: boolean;
  readonly smtp: boolean;
}

/** The caller behind a valid API key, resolved once per request. */
export interface AuthenticatedKey {
  readonly keyId: string;
  readonly keyName: string;
  /** Displayable start of the key, e.g. `tml_a1b2c3d4`. */
  readonly keyPrefix: string;
  readonly scopes: readonly string[];
  /** When the key stops working (own expiry or end of rotation grace); null when never. */
  readonly expiresAt: Date | null;
  readonly companyId: string;
  readonly companyName: string;
  readonly entitlements: CompanyEntitlements;
}

export interface ApiKeyAuthenticator {
  /**
   * Resolves a presented bearer key. Throws ApiError `API_KEY_INVALID`
   * (unknown, malformed or revoked) or `API_KEY_EXPIRED` (past its expiry or
   * rotation grace). Records "last used" without a synchronous write.
   */
  authenticate(presentedKey: string): Promise<AuthenticatedKey>;
}
