import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useInfiniteQuery } from "@connectrpc/connect-query";
import { MailService } from "@gen/mail/v1/mail_pb.js";
import { type FormEvent, useEffect, useRef } from "react";
import { Link, useSearchParams } from "react-router";
import { errorMessage } from "../../app/errors.ts";
import { DateTime, dateParam, formatNumber, fromLocalInput, toLocalInput } from "../../app/format.tsx";
import { STATUSES, StatusBadge, statusOf } from "./statuses.tsx";
import "./messages.css";

const PAGE_SIZE = 25;

/** The filters of the log, read from the URL (a filtered view is a link; back and forward move between filters). */
function useFilters() {
  const [params, setParams] = useSearchParams();
  const filters = {
    status: statusOf(params.get("status")),
    q: params.get("q") ?? "",
    tag: params.get("tag") ?? "",
    since: dateParam(params.get("since")),
  };
  return { params, filters, setParams };
}

/**
 * The message log, newest first, one page of 25 after another (the
 * cursor of the previous page; more load as the end of the list comes into
 * view, or with the button).
 */
export function MessageLog() {
  const { params, filters, setParams } = useFilters();
  const query = useInfiniteQuery(
    MailService.method.listMessages,
    {
      limit: PAGE_SIZE,
      // The first page (the server reads an empty cursor as none).
      cursor: "",
      status: filters.status,
      q: filters.q || undefined,
      tag: filters.tag || undefined,
      since: filters.since ? timestampFromDate(filters.since) : undefined,
    },
    { pageParamKey: "cursor", getNextPageParam: (page) => page.nextCursor || undefined },
  );

  function applyFilters(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ["status", "q", "tag"]) {
      const value = String(form.get(name) ?? "").trim();
      if (value) next.set(name, value);
    }
    const since = fromLocalInput(String(form.get("since") ?? ""));
    if (since) next.set("since", since.toISOString());
    setParams(next);
  }

  const messages = query.data?.pages.flatMap((page) => page.items) ?? [];
  const nextPageError = query.isFetchNextPageError ? errorMessage(query.error) : undefined;
  const filtered = params.size > 0;

  return (
    <section className="page" aria-labelledby="messages-title">
      <h1 id="messages-title">Messages</h1>
      {/* Keyed by the URL, so back and forward show the filters of the view they return to. */}
      <form key={params.toString()} className="filters" role="search" aria-label="Filter messages" onSubmit={applyFilters}>
        <div className="field">
          <label htmlFor="filter-q">Recipient or subject</label>
          <input id="filter-q" name="q" type="search" defaultValue={filters.q} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="filter-status">Status</label>
          <select id="filter-status" name="status" defaultValue={params.get("status") ?? ""}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s.name} value={s.name}>
                {s.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-tag">Tag</label>
          <input id="filter-tag" name="tag" type="text" defaultValue={filters.tag} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="filter-since">Since</label>
          <input id="filter-since" name="since" type="datetime-local" defaultValue={filters.since ? toLocalInput(filters.since) : ""} />
        </div>
        <div className="filters-actions">
          <button type="submit" className="button">
            Apply filters
          </button>
          {filtered ? (
            <Link className="button button-quiet" to={{ search: "" }}>
              Clear
            </Link>
          ) : null}
        </div>
      </form>

      {query.isPending ? (
        <p role="status">Loading messages…</p>
      ) : query.isError ? (
        <p role="alert" className="error">
          {errorMessage(query.error)}
        </p>
      ) : messages.length === 0 ? (
        <p role="status">{filtered ? "No message matches these filters." : "No message yet."}</p>
      ) : (
        <>
          <p className="muted" role="status">
            {query.hasNextPage ? `Showing the newest ${formatNumber(messages.length)} messages.` : `${formatNumber(messages.length)} messages.`}
          </p>
          <div className="table-wrap" role="region" aria-label="Message log" tabIndex={0}>
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Recipient</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Tags</th>
                </tr>
              </thead>
              <tbody>
                {messages.map((message) => (
                  <tr key={message.id}>
                    <td>
                      <Link to={message.id}>{message.recipient}</Link>
                    </td>
                    <td className="cell-subject">{message.subject}</td>
                    <td>
                      <StatusBadge status={message.status} />
                    </td>
                    <td>
                      <DateTime value={message.createdAt} />
                    </td>
                    <td>
                      <Tags tags={message.tags} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <MoreMessages
            hasMore={query.hasNextPage}
            loading={query.isFetchingNextPage}
            error={nextPageError}
            loadMore={() => void query.fetchNextPage()}
          />
        </>
      )}
    </section>
  );
}

export function Tags({ tags }: { tags: Record<string, string> }) {
  const entries = Object.entries(tags);
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="tags">
      {entries.map(([key, value]) => (
        <li key={key} className="badge">
          {key}: {value}
        </li>
      ))}
    </ul>
  );
}

/** The next page: when the button scrolls into view, or when it is pressed (keyboard included). */
function MoreMessages({ hasMore, loading, error, loadMore }: { hasMore: boolean; loading: boolean; error: string | undefined; loadMore: () => void }) {
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const element = button.current;
    if (!element || !hasMore || error) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting) && !loading) loadMore();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasMore, loading, error, loadMore]);
  if (!hasMore) return <p className="muted list-end">End of the log.</p>;
  return (
    <div className="list-more">
      {error ? (
        <p role="alert" className="error">
          {error}
        </p>
      ) : null}
      <button ref={button} type="button" className="button button-quiet" onClick={loadMore} disabled={loading}>
        {loading ? "Loading…" : "Load more messages"}
      </button>
    </div>
  );
}
