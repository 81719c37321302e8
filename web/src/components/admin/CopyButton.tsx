import { useId, useState } from "react";

export type CopyState = "idle" | "copied" | "failed";

/** Copies text to the clipboard and remembers how it went (the clipboard may refuse, e.g. without a user gesture). */
export function useCopy(): { state: CopyState; copy: (text: string) => void } {
  const [state, setState] = useState<CopyState>("idle");
  return {
    state,
    copy: (text) => {
      navigator.clipboard.writeText(text).then(
        () => setState("copied"),
        () => setState("failed"),
      );
    },
  };
}

/** What the last copy did, announced politely; `what` is where to copy from by hand when the clipboard refused. */
export function CopyStatus({ state, what }: { state: CopyState; what: string }) {
  return (
    <p className="hint" aria-live="polite">
      {state === "copied" ? "Copied to the clipboard." : state === "failed" ? `Could not copy: select ${what} and copy it yourself.` : ""}
    </p>
  );
}

/**
 * A value to copy that is not a secret (a hosted page's address): the value
 * in a read-only field with a Copy button beside it.
 */
export function CopyField({ label, value }: { label: string; value: string }) {
  const id = useId();
  const copy = useCopy();
  return (
    <div className="secret">
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input id={id} readOnly value={value} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" className="button" onClick={() => copy.copy(value)} aria-label={`Copy ${label.toLowerCase()}`}>
          Copy
        </button>
      </div>
      <CopyStatus state={copy.state} what="the field" />
    </div>
  );
}

/** A block of code to copy (an HTML snippet): read-only, scrollable by keyboard, with a Copy button. */
export function CopyBlock({ label, value }: { label: string; value: string }) {
  const copy = useCopy();
  return (
    <div className="secret">
      <pre className="code" tabIndex={0} role="region" aria-label={label}>
        {value}
      </pre>
      <div className="actions">
        <button type="button" className="button" onClick={() => copy.copy(value)} aria-label={`Copy ${label.toLowerCase()}`}>
          Copy
        </button>
      </div>
      <CopyStatus state={copy.state} what="the text" />
    </div>
  );
}
