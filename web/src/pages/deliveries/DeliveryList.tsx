import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useInfiniteQuery, useQuery } from "@connectrpc/connect-query";
import { useId, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";
import { WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { dateParam, DateTime, formatNumber, fromLocalInput, toLocalInput } from "../../app/format.tsx";
import { WEBHOOK_EVENTS } from "../../components/admin/webhook-events.ts";
import { lastOutcome, STATES, StateBadge } from "../../components/admin/delivery-states.tsx";

const PAGE = 25;

/**
 * Deliveries, newest first, filtered by endpoint, event, state and since
 * (all in the URL: a filtered view is a link). The list has no retry
 * control (spec); a dead letter is retried from its own page.
 */
export function DeliveryList() {
  const id = useId();
  const [params, setParams] = useSearchParams();
  const endpointId = params.get("endpoint") ?? "";
  const event = params.get("event") ?? "";
  const stateParam = params.get("state") ?? "";
  const state = STATES.find((s) => s.name === stateParam)?.state;
  const since = dateParam(params.get("since"));
  // Set by links from a message's page: the deliveries that message caused.
  const messageId = params.get("message") ?? "";
  const endpoints = useQuery(WebhooksService.method.listWebhookEndpoints, {});
  const urlOf = new Map((endpoints.data?.items ?? []).map((e) => [e.id, e.url]));
  const deliveries = useInfiniteQuery(
    WebhooksService.method.listWebhookDeliveries,
    {
      limit: PAGE,
      // The first page: no cursor (an empty one is none).
      cursor: "",
      ...(endpointId ? { endpointId } : {}),
      ...(event ? { event } : {}),
      ...(state !== undefined ? { state } : {}),
      ...(since ? { since: timestampFromDate(since) } : {}),
      ...(messageId ? { messageId } : {}),
    },
    { pageParamKey: "cursor", getNextPageParam: (page) => page.nextCursor },
  );
  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const name of ["endpoint", "event", "state"]) {
      const value = String(form.get(name) ?? "");
      if (value) next.set(name, value);
    }
    const from = fromLocalInput(String(form.get("since") ?? ""));
    if (from) next.set("since", from.toISOString());
    if (messageId) next.set("message", messageId);
    setParams(next);
  };
  const items = deliveries.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <section className="admin-page" aria-labelledby="deliveries-title">
      <header className="admin-page-header">
        <h1 id="deliveries-title">Deliveries</h1>
      </header>
      {messageId ? (
        <p>
          Caused by the message <span className="admin-mono">{messageId}</span>.{" "}
          <Link to={`/messages/${encodeURIComponent(messageId)}`}>Open the message</Link>
        </p>
      ) : null}
      {/* Keyed by the URL (back/forward) and by the endpoints arriving, so the selects show the filters in force. */}
      <form className="admin-filters" onSubmit={apply} key={`${params.toString()}|${endpoints.isSuccess}`} aria-label="Filter the deliveries">
        <div className="admin-field">
          <label htmlFor={`${id}-endpoint`}>Endpoint</label>
          <select id={`${id}-endpoint`} name="endpoint" defaultValue={endpointId}>
            <option value="">Any endpoint</option>
            {(endpoints.data?.items ?? []).map((e) => (
              <option key={e.id} value={e.id}>
                {e.url}
              </option>
            ))}
            {endpointId && endpoints.data && !urlOf.has(endpointId) ? <option value={endpointId}>{endpointId}</option> : null}
          </select>
        </div>
        <div className="admin-field">
          <label htmlFor={`${id}-event`}>Event</label>
          <select id={`${id}-event`} name="event" defaultValue={event}>
            <option value="">Any event</option>
            {WEBHOOK_EVENTS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div className="admin-field">
          <label htmlFor={`${id}-state`}>State</label>
          <select id={`${id}-state`} name="state" defaultValue={stateParam}>
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s.name} value={s.name}>
                {s.name.replace("_", " ")}
              </option>
            ))}
          </select>
        </div>
        <div className="admin-field">
          <label htmlFor={`${id}-since`}>Since (your local time)</label>
          <input id={`${id}-since`} name="since" type="datetime-local" defaultValue={since ? toLocalInput(since) : ""} />
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
      {deliveries.isPending ? (
        <p role="status">Loading deliveries…</p>
      ) : deliveries.isError ? (
        <p role="alert" className="admin-error">
          {errorMessage(deliveries.error)}
        </p>
      ) : items.length === 0 ? (
        <p>No delivery matches.</p>
      ) : (
        <>
          <div className="admin-table-wrap" tabIndex={0} role="region" aria-label="Table of deliveries">
            <table className="admin-table">
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Event</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">State</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last attempt</th>
                  <th scope="col">Next attempt</th>
                </tr>
              </thead>
              <tbody>
                {items.map((d) => (
                  <tr key={d.id} data-delivery-id={d.id}>
                    <td>
                      <Link to={d.id}>
                        <DateTime value={d.createdAt} />
                      </Link>
                    </td>
                    <td className="admin-mono">{d.event}</td>
                    <td className="admin-mono admin-break">{urlOf.get(d.endpointId) ?? d.endpointId}</td>
                    <td>
                      <StateBadge state={d.state} />
                    </td>
                    <td>{formatNumber(d.attemptCount)}</td>
                    <td>{lastOutcome(d)}</td>
                    <td>
                      <DateTime value={d.nextAttemptAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {deliveries.hasNextPage ? (
            <button type="button" onClick={() => void deliveries.fetchNextPage()} disabled={deliveries.isFetchingNextPage}>
              {deliveries.isFetchingNextPage ? "Loading…" : "Older deliveries"}
            </button>
          ) : (
            <p className="admin-hint">No older delivery.</p>
          )}
        </>
      )}
    </section>
  );
}
