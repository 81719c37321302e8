import type { ReactNode } from "react";
import { Dialog } from "radix-ui";

/**
 * A Radix Dialog opened by a button: a form (create a key, an endpoint,
 * invite a member) and, after it succeeds, what the server answered once.
 */
export function FormDialog(props: {
  label: string;
  /** Accessible name of the opening button when `label` alone is ambiguous in a table row. */
  ariaLabel?: string;
  /** Style of the opening button (default: the page's primary action). */
  triggerClass?: string;
  title: string;
  description?: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  children: ReactNode;
}) {
  return (
    <Dialog.Root open={props.open} onOpenChange={props.onOpenChange}>
      <Dialog.Trigger asChild>
        <button type="button" className={props.triggerClass ?? "button button-primary"} aria-label={props.ariaLabel}>
          {props.label}
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        {/* A plain backdrop: Radix's Overlay injects a <style> element (react-remove-scroll), which the CSP refuses. */}
        <div className="overlay" aria-hidden="true" />
        <Dialog.Content className="dialog" {...(props.description ? {} : { "aria-describedby": undefined })}>
          <Dialog.Title>{props.title}</Dialog.Title>
          {props.description ? <Dialog.Description>{props.description}</Dialog.Description> : null}
          {props.children}
          <Dialog.Close asChild>
            <button type="button" className="button dialog-close" aria-label="Close">
              ×
            </button>
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

/** The close of a dialog whose form succeeded: what else to do (a link), and Done. */
export function DialogDone({ onDone, children }: { onDone: () => void; children?: ReactNode }) {
  return (
    <div className="actions">
      {children}
      <button type="button" className="button button-primary" onClick={onDone}>
        Done
      </button>
    </div>
  );
}
