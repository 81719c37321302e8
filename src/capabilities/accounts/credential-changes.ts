/**
 * How a change that may refuse a key (a revocation, a rotation, a company's
 * entitlements) reaches the cached key lookups (cached-credentials.ts)
 * before it is answered.
 */
export interface CredentialChangeHooks {
  /**
   * Told after every such change, whatever its outcome: the process's own
   * cached lookups go at once, before the change is answered.
   */
  readonly onCredentialsChanged?: () => void;
  /**
   * Called before the change; the promise it answers settles when the
   * change feed has heard a change (or after a short bound). The change is
   * answered only then, so every API process's cache has been told before
   * the caller can make its next call anywhere.
   */
  readonly changeHeard?: () => Promise<void>;
}

/** Runs a change of keys or entitlements under `hooks` (the process's cache is emptied even when it failed midway). */
export async function changingCredentials<T>(hooks: CredentialChangeHooks, change: () => Promise<T>): Promise<T> {
  const heard = hooks.changeHeard?.();
  try {
    const result = await change();
    await heard;
    return result;
  } finally {
    hooks.onCredentialsChanged?.();
  }
}
