import { type HTMLAttributes, type ReactNode, useEffect, useEffectEvent, useRef } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../app/errors.ts";
import type { PagedList } from "./paged-list.ts";

/** One column of a list: its header and what each row shows under it. */
export interface Column<T> {
  readonly header: string;
  readonly cell: (item: T) => ReactNode;
  /**
   * `title`: the row's header cell (`<th scope="row">`), the card's title on a narrow screen;
   * `actions`: the row's buttons, under an unspoken header, without a label on a card.
   */
  readonly role?: "title" | "actions";
  /** Free text that should not squeeze into a narrow column (subjects, descriptions). */
  readonly wide?: boolean;
  readonly className?: string;
}

/** The row's title as a link to the item's own page (by default `<list>/<id>`). */
export function titleLink<T extends { readonly id: string }>(header: string, text: (item: T) => ReactNode, options: { to?: (item: T) => string; className?: string } = {}): Column<T> {
  return {
    header,
    role: "title",
    cell: (item) => (
      <Link to={options.to?.(item) ?? item.id} className={options.className}>
        {text(item)}
      </Link>
    ),
  };
}

/**
 * A list as a table: on a wide screen rows and columns, on a narrow one
 * (its container under 40rem) a card per row with each value under its
 * column's name, so no column hides behind a sideways scroll. The table
 * keeps its roles written out: a table restyled as blocks loses them in
 * some browsers.
 */
export function ListTable<T>(props: {
  /** Names the list (its region) for assistive technology and tests. */
  label: string;
  columns: readonly Column<T>[];
  items: readonly T[];
  rowKey: (item: T) => string;
  /** Attributes of a row (for example `data-delivery-id`). */
  rowProps?: (item: T) => HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, string>;
}) {
  const { columns } = props;
  return (
    <div className="list">
      {/* Focusable: a keyboard can scroll a table wider than the screen. */}
      <div className="list-scroll" role="region" aria-label={props.label} tabIndex={0}>
        <table className="list-table" role="table">
          <thead role="rowgroup">
            <tr role="row">
              {columns.map((column) => (
                <th key={column.header} scope="col" role="columnheader">
                  {column.role === "actions" ? <span className="visually-hidden">{column.header}</span> : column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody role="rowgroup">
            {props.items.map((item) => (
              <tr key={props.rowKey(item)} role="row" {...props.rowProps?.(item)}>
                {columns.map((column) => {
                  const className = [column.role === "title" ? "list-title" : column.role === "actions" ? "list-actions" : "", column.wide ? "wide" : "", column.className ?? ""]
                    .filter(Boolean)
                    .join(" ");
                  const cellProps = { "data-label": column.header, className: className || undefined };
                  return column.role === "title" ? (
                    <th key={column.header} scope="row" role="rowheader" {...cellProps}>
                      <div className="list-value">{column.cell(item)}</div>
                    </th>
                  ) : (
                    <td key={column.header} role="cell" {...cellProps}>
                      {/* One box for the value, beside its label on a card. */}
                      <div className="list-value">{column.cell(item)}</div>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/**
 * Every list of the screen: loading, the error with a retry, the empty
 * state, the rows (<ListTable>), and for a list that pages the next page,
 * read when the end of the list comes into view or with the button.
 */
export function ListView<T extends { readonly id: string }>(props: {
  list: PagedList<T>;
  label: string;
  /** What the rows are, in the plural: "Loading messages…", "Load more messages", "No more messages.". */
  noun: string;
  columns: readonly Column<T>[];
  rowProps?: (item: T) => HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, string>;
  /** What an empty list says ("No message yet.", "No message matches these filters."). */
  empty: ReactNode;
  /** A line above the rows (for example how many are shown). */
  summary?: (count: number, hasMore: boolean) => ReactNode;
}) {
  const { list } = props;
  if (list.pending) return <p role="status">Loading {props.noun}…</p>;
  if (list.items.length === 0 && list.error !== undefined) return <Failure error={list.error} retry={list.retry} />;
  if (list.items.length === 0) return <p role="status">{props.empty}</p>;
  return (
    <div>
      {list.error !== undefined ? <Failure error={list.error} retry={list.retry} /> : null}
      {props.summary ? (
        <p className="muted list-status" role="status">
          {props.summary(list.items.length, list.hasMore)}
        </p>
      ) : null}
      <ListTable label={props.label} columns={props.columns} items={list.items} rowKey={(item) => item.id} rowProps={props.rowProps} />
      {list.paged ? <MoreItems list={list} noun={props.noun} /> : null}
    </div>
  );
}

function Failure({ error, retry }: { error: unknown; retry: () => void }) {
  return (
    <div className="list-more">
      <p role="alert" className="error">
        {errorMessage(error)}
      </p>
      <button type="button" className="button" onClick={retry}>
        Try again
      </button>
    </div>
  );
}

/** The next page: when the button scrolls into view, or when it is pressed (keyboard included). */
function MoreItems<T>({ list, noun }: { list: PagedList<T>; noun: string }) {
  const button = useRef<HTMLButtonElement>(null);
  // The observer outlives renders; it calls whatever loads the next page now.
  const loadMore = useEffectEvent(() => list.loadMore());
  const { hasMore, loadingMore, moreError } = list;
  useEffect(() => {
    const element = button.current;
    if (!element || !hasMore || loadingMore || moreError !== undefined) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) loadMore();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasMore, loadingMore, moreError]);
  if (!hasMore) return <p className="muted list-end">No more {noun}.</p>;
  return (
    <div className="list-more">
      {moreError !== undefined ? (
        <p role="alert" className="error">
          {errorMessage(moreError)}
        </p>
      ) : null}
      <button ref={button} type="button" className="button" onClick={list.loadMore} disabled={loadingMore}>
        {loadingMore ? "Loading…" : moreError !== undefined ? "Try again" : `Load more ${noun}`}
      </button>
    </div>
  );
}
