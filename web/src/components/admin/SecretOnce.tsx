import { useId, useState, type ReactNode } from "react";

/**
 * A value the server shows once (an API key, a webhook signing secret, a
 * sign-in link to hand over): the value in a read-only field, a copy
 * button, and what to do with it (by default: copy the secret now, it will
 * not be shown again).
 */
export function SecretOnce({ label, secret, warning, children }: { label: string; secret: string; warning?: ReactNode; children?: ReactNode }) {
  const id = useId();
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  const copyNow = () => {
    navigator.clipboard.writeText(secret).then(
      () => setCopy("copied"),
      () => setCopy("failed"),
    );
  };
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
        <button type="button" className="button" onClick={copyNow}>
          Copy
        </button>
      </div>
      <p className="hint" aria-live="polite">
        {copy === "copied" ? "Copied to the clipboard." : copy === "failed" ? "Could not copy: select the field and copy it yourself." : ""}
      </p>
      {children}
    </div>
  );
}
