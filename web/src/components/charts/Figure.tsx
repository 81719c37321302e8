import { type ReactNode, useId } from "react";

/** A chart with its caption, and the same numbers as a table (the chart itself is hidden from assistive technology). */
export function Figure({
  title,
  explanation,
  table,
  children,
  legend,
  level = 2,
}: {
  title: string;
  explanation: string;
  table: ReactNode;
  children: ReactNode;
  legend?: ReactNode;
  /** The caption's heading level: 2 on a page of figures, 3 inside a section. */
  level?: 2 | 3;
}) {
  const id = useId();
  const Heading = level === 3 ? "h3" : "h2";
  return (
    <figure className="chart" aria-labelledby={id}>
      <figcaption>
        <Heading id={id}>{title}</Heading>
        <p className="hint">{explanation}</p>
      </figcaption>
      {legend}
      <div className="chart-area" aria-hidden="true">
        {children}
      </div>
      <details className="chart-table">
        <summary>{title}: the numbers as a table</summary>
        {/* Focusable: on a narrow screen the table scrolls sideways, from the keyboard too. */}
        <div className="list-scroll" role="region" aria-label={`${title}, table`} tabIndex={0}>
          {table}
        </div>
      </details>
    </figure>
  );
}

/** The series of a chart, each with its colour class in screen.css (`chart-<key>`). */
export function Legend({ items }: { items: readonly { key: string; label: string }[] }) {
  return (
    <ul className="chart-legend" aria-hidden="true">
      {items.map((item) => (
        <li key={item.key}>
          <span className={`chart-swatch chart-${item.key}`} />
          {item.label}
        </li>
      ))}
    </ul>
  );
}
