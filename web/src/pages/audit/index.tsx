import "../../components/admin/admin.css";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useInfiniteQuery } from "@connectrpc/connect-query";
import { useId, type FormEvent } from "react";
import { useSearchParams } from "react-router";
import { AuditActorKind, AuditService } from "@gen/mail/v1/audit_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { dateParam, DateTime, fromLocalInput, toLocalInput } from "../../app/format.tsx";

const PAGE = 50;

const ACTOR_KIND: Record<AuditActorKind, string> = {
  [AuditActorKind.UNSPECIFIED]: "",
  [AuditActorKind.MEMBER]: "member",
  [AuditActorKind.API_KEY]: "API key",
  [AuditActorKind.OPERATOR]: "operator",
};

/** The audit log (Mail administrators): /admin/audit?actor=&action=&since=, newest first, cursor paging. */
export default function AuditPage() {
  const id = useId();
  const [params, setParams] = useSearchParams();
  const actor = params.get("actor") ?? "";
  const action = params.get("action") ?? "";
  const sinceDate = dateParam(params.get("since"));
  const events = useInfiniteQuery(
    AuditService.method.listAuditEvents,
    {
      limit: PAGE,
      // The first page: no cursor (an empty one is none).
      cursor: "",
      ...(actor ? { actor } : {}),
      ...(action ? { action } : {}),
      ...(sinceDate ? { since: timestampFromDate(sinceDate) } : {}),
    },
    { pageParamKey: "cursor", getNextPageParam: (page) => page.nextCursor },
  );
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ["actor", "action"]) {
      const value = String(form.get(name) ?? "").trim();
      if (value) next.set(name, value);
    }
    const since = fromLocalInput(String(form.get("since") ?? ""));
    if (since) next.set("since", since.toISOString());
    setParams(next);
  };
  const items = events.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <section className="admin-page" aria-labelledby="audit-title">
      <header className="admin-page-header">
        <h1 id="audit-title">Audit log</h1>
      </header>
      <form className="admin-filters" onSubmit={apply} key={params.toString()} aria-label="Filter the audit log">
        <div className="admin-field">
          <label htmlFor={`${id}-actor`}>Actor</label>
          <input id={`${id}-actor`} name="actor" defaultValue={actor} placeholder="email, key prefix or operator" />
        </div>
        <div className="admin-field">
          <label htmlFor={`${id}-action`}>Action</label>
          <input id={`${id}-action`} name="action" defaultValue={action} placeholder="api_key.revoked" />
        </div>
        <div className="admin-field">
          <label htmlFor={`${id}-since`}>Since (your local time)</label>
          <input id={`${id}-since`} name="since" type="datetime-local" defaultValue={sinceDate ? toLocalInput(sinceDate) : ""} />
        </div>
        <div className="admin-actions">
          <button type="submit" className="admin-primary">
            Filter
          </button>
          {params.size > 0 ? (
            <button type="button" onClick={() => setParams(new URLSearchParams())}>
              Clear filters
            </button>
          ) : null}
        </div>
      </form>
      {events.isPending ? (
        <p role="status">Loading the audit log…</p>
      ) : events.isError ? (
        <p role="alert" className="admin-error">
          {errorMessage(events.error)}
        </p>
      ) : items.length === 0 ? (
        <p>No event matches.</p>
      ) : (
        <>
          <div className="admin-table-wrap" tabIndex={0} role="region" aria-label="Table of audit events">
            <table className="admin-table">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Details</th>
                  <th scope="col">Request</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <DateTime value={e.occurredAt} />
                    </td>
                    <td>
                      {e.actor} <span className="admin-hint">{ACTOR_KIND[e.actorKind]}</span>
                    </td>
                    <td className="admin-mono">{e.action}</td>
                    <td>
                      <span className="admin-hint">{e.targetType}</span> <span className="admin-mono admin-break">{e.targetId}</span>
                    </td>
                    <td className="admin-mono admin-break">{e.details}</td>
                    <td>
                      <span className="admin-mono admin-break">{e.requestId}</span>
                      {e.clientIp ? <span className="admin-hint"> from {e.clientIp}</span> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {events.hasNextPage ? (
            <button type="button" onClick={() => void events.fetchNextPage()} disabled={events.isFetchingNextPage}>
              {events.isFetchingNextPage ? "Loading…" : "Older events"}
            </button>
          ) : (
            <p className="admin-hint">End of the log.</p>
          )}
        </>
      )}
    </section>
  );
}
