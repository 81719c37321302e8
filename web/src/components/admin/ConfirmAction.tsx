import { AlertDialog } from "radix-ui";
import { useState, type MouseEvent, type ReactNode } from "react";
import { problemText } from "../../app/errors.ts";

/**
 * A button that asks before it acts (revoke, delete, remove, retry): a
 * Radix AlertDialog, focus on Cancel, Escape cancels. The dialog stays open
 * while the action runs and shows the server's message if it fails (without
 * the field names of a request the member never saw).
 */
export function ConfirmAction(props: {
  /** The button that opens the dialog. */
  label: string;
  /** Accessible name of the button when `label` alone is ambiguous in a table row. */
  ariaLabel?: string;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  destructive?: boolean;
  disabled?: boolean;
  onConfirm: () => Promise<unknown>;
}) {
  const [open, setOpen] = useState(false);
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState<unknown>(undefined);
  const confirm = async (event: MouseEvent) => {
    event.preventDefault();
    setPending(true);
    setFailure(undefined);
    try {
      await props.onConfirm();
      setOpen(false);
    } catch (error) {
      setFailure(error ?? new Error("failed"));
    } finally {
      setPending(false);
    }
  };
  return (
    <AlertDialog.Root
      open={open}
      onOpenChange={(next) => {
        if (!pending) setOpen(next);
        if (!next) setFailure(undefined);
      }}
    >
      <AlertDialog.Trigger asChild>
        <button type="button" className={props.destructive ? "button button-danger" : "button"} aria-label={props.ariaLabel} disabled={props.disabled}>
          {props.label}
        </button>
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        {/* A plain backdrop: Radix's Overlay injects a <style> element (react-remove-scroll), which the CSP refuses. */}
        <div className="overlay" aria-hidden="true" />
        <AlertDialog.Content className="dialog">
          <AlertDialog.Title>{props.title}</AlertDialog.Title>
          <AlertDialog.Description asChild>
            <div>{props.description}</div>
          </AlertDialog.Description>
          {failure !== undefined ? (
            <p role="alert" className="error">
              {problemText(failure)}
            </p>
          ) : null}
          <div className="actions">
            <AlertDialog.Cancel asChild>
              <button type="button" className="button" disabled={pending}>
                Cancel
              </button>
            </AlertDialog.Cancel>
            <AlertDialog.Action asChild>
              <button type="button" className={props.destructive ? "button button-danger" : "button button-primary"} disabled={pending} onClick={(event) => void confirm(event)}>
                {pending ? "Working…" : props.confirmLabel}
              </button>
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
