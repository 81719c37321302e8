import { useQuery } from "@connectrpc/connect-query";
import { MailService, type Message } from "@gen/mail/v1/mail_pb.js";
import { Link, useParams } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { errorMessage, isNotFound } from "../../app/errors.ts";
import { Address, DateTime } from "../../app/format.tsx";
import { Fields } from "../../components/Fields.tsx";
import { Page } from "../../components/Page.tsx";
import { MessageContent } from "./MessageContent.tsx";
import { MessageDeliveries } from "./MessageDeliveries.tsx";
import { Tags } from "./MessageLog.tsx";
import { isFinalStatus, StatusBadge } from "./statuses.tsx";

/** How often the page asks again while the message can still change. */
const LIVE_REFRESH_MS = 2_000;

/**
 * One message: every field of the spec's Message, its events (refreshed
 * while the message is not final), the webhook deliveries it caused
 * (administrators), and its content as sent.
 */
export function MessagePage() {
  const { id = "" } = useParams();
  const { isAdmin } = useSession();
  const query = useQuery(
    MailService.method.getMessage,
    { id },
    {
      refetchInterval: (q) => {
        const message = q.state.data?.message;
        return message && !isFinalStatus(message.status) ? LIVE_REFRESH_MS : false;
      },
      refetchIntervalInBackground: false,
    },
  );

  if (query.isPending) return <p role="status">Loading the message…</p>;
  if (query.isError || !query.data.message) {
    return (
      <Page before={<BackToLog />} title={query.isError && !isNotFound(query.error) ? "The message could not be read" : "Message not found"}>
        <p role="alert">{query.isError && !isNotFound(query.error) ? errorMessage(query.error) : "There is no message with this id in your company."}</p>
      </Page>
    );
  }
  const message = query.data.message;
  const live = !isFinalStatus(message.status);
  return (
    <Page before={<BackToLog />} title={message.subject || "(no subject)"}>
      <MessageFields message={message} />
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Events</h2>
        {live ? (
          <p className="muted" role="status">
            This message can still change: the events refresh by themselves.
          </p>
        ) : null}
        <Timeline message={message} />
      </section>
      {isAdmin ? <MessageDeliveries messageId={message.id} live={live} /> : null}
      <MessageContent messageId={message.id} />
    </Page>
  );
}

function BackToLog() {
  return (
    <p>
      <Link to="..">← Messages</Link>
    </p>
  );
}

function MessageFields({ message }: { message: Message }) {
  const none = <span className="muted">—</span>;
  return (
    <Fields
      items={[
        { label: "Id", value: message.id, mono: true },
        { label: "Recipient", value: <Address value={message.recipient} /> },
        { label: "Subject", value: message.subject },
        { label: "Status", value: <StatusBadge status={message.status} /> },
        { label: "Error code", value: message.errorCode ?? none, mono: true },
        { label: "Template", value: message.templateId ?? none, mono: true },
        { label: "Provider message id", value: message.providerMessageId ?? none, mono: true },
        { label: "Created", value: <DateTime value={message.createdAt} /> },
        { label: "Sent", value: <DateTime value={message.sentAt} empty="not yet" /> },
        { label: "Last event", value: <DateTime value={message.lastEventAt} empty="none yet" /> },
        { label: "Tags", value: <Tags tags={message.tags} /> },
      ]}
    />
  );
}

function Timeline({ message }: { message: Message }) {
  if (message.events.length === 0) return <p>No event yet.</p>;
  return (
    <ol className="timeline" aria-label="Events, oldest first">
      {message.events.map((event, index) => (
        <li key={`${index}-${event.type}`}>
          <span className="timeline-type">{event.type}</span> <DateTime value={event.at} />
        </li>
      ))}
    </ol>
  );
}
