import { useId, type ReactNode } from "react";
import { CopyStatus, useCopy } from "./CopyButton.tsx";

/**
 * A value the server shows once (an API key, a webhook signing secret, a
 * sign-in link to hand over): the value in a read-only field, a copy
 * button, and what to do with it (by default: copy the secret now, it will
 * not be shown again).
 */
export function SecretOnce({ label, secret, warning, children }: { label: string; secret: string; warning?: ReactNode; children?: ReactNode }) {
  const id = useId();
  const copy = useCopy();
  return (
    <div className="secret" role="group" aria-labelledby={`${id}-label`}>
      <p className="warning" id={`${id}-warning`}>
        {warning ?? (
          <>
            <strong>Copy this secret now.</strong> It will not be shown again; if it is lost, replace it.
          </>
        )}
      </p>
      <label id={`${id}-label`} htmlFor={`${id}-value`}>
        {label}
      </label>
      <div className="secret-row">
        <input id={`${id}-value`} readOnly value={secret} aria-describedby={`${id}-warning`} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" className="button" onClick={() => copy.copy(secret)}>
          Copy
        </button>
      </div>
      <CopyStatus state={copy.state} what="the field" />
      {children}
    </div>
  );
}
