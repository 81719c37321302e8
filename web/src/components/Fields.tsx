import type { ReactNode } from "react";

export interface FieldEntry {
  readonly label: string;
  readonly value: ReactNode;
  /** Ids and codes: set in the monospace font. */
  readonly mono?: boolean;
}

/** A record's fields (a message, an endpoint, a delivery): each label above its value, as many columns as fit. */
export function Fields({ items }: { items: readonly FieldEntry[] }) {
  return (
    <dl className="fields">
      {items.map((item) => (
        <div key={item.label}>
          <dt>{item.label}</dt>
          <dd className={item.mono ? "mono break" : undefined}>{item.value}</dd>
        </div>
      ))}
    </dl>
  );
}
