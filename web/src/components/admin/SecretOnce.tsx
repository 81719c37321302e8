import { useId, useState, type ReactNode } from "react";

/**
 * A secret the server shows once (an API key, a webhook signing secret):
 * the value in a read-only field, a copy button, and the warning that it
 * will not be shown again.
 */
export function SecretOnce({ label, secret, children }: { label: string; secret: string; children?: ReactNode }) {
  const id = useId();
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  const copyNow = () => {
    navigator.clipboard.writeText(secret).then(
      () => setCopy("copied"),
      () => setCopy("failed"),
    );
  };
  return (
    <div className="admin-secret" role="group" aria-labelledby={`${id}-label`}>
      <p className="admin-warning" id={`${id}-warning`}>
        <strong>Copy this secret now.</strong> It will not be shown again; if it is lost, replace it.
      </p>
      <label id={`${id}-label`} htmlFor={`${id}-value`}>
        {label}
      </label>
      <div className="admin-secret-row">
        <input
          id={`${id}-value`}
          className="admin-mono"
          readOnly
          value={secret}
          aria-describedby={`${id}-warning`}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" onClick={copyNow}>
          Copy
        </button>
      </div>
      <p className="admin-hint" aria-live="polite">
        {copy === "copied" ? "Copied to the clipboard." : copy === "failed" ? "Could not copy: select the field and copy it yourself." : ""}
      </p>
      {children}
    </div>
  );
}
