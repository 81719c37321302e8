/** What a visitor without a session sees: how to get in (there is no password). */
export function SignedOut({ reason }: { reason?: string }) {
  return (
    <main className="page-centered" aria-labelledby="signed-out-title">
      <h1 id="signed-out-title">Mail administration</h1>
      {reason ? <p role="alert">{reason}</p> : null}
      <p>You are not signed in. To sign in, open a sign-in link.</p>
      <p className="muted">
        An administrator of your company can invite you and send you a link; an operator can print one with{" "}
        <code>mailctl member sign-in-link</code>. A link works once, for 15 minutes.
      </p>
    </main>
  );
}
