import { useQuery } from "@connectrpc/connect-query";
import { MessageContentService } from "@gen/mail/v1/message_content_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { MessageAttachments } from "./MessageAttachments.tsx";

/**
 * The message as it was sent: the HTML in a sandboxed frame (sandbox="":
 * no scripts, no same-origin, no forms, no top navigation; the frame's
 * document inherits the screen's CSP, so remote images and trackers are
 * not loaded) and the text version beside it, then its files. Once the
 * content retention removed them, it says so.
 */
export function MessageContent({ messageId }: { messageId: string }) {
  const query = useQuery(MessageContentService.method.getMessageContent, { id: messageId }, { staleTime: Infinity });
  return (
    <section aria-labelledby="content-title">
      <h2 id="content-title">Content as sent</h2>
      {query.isPending ? (
        <p role="status">Loading the content…</p>
      ) : query.isError ? (
        <p role="alert" className="error">
          {errorMessage(query.error)}
        </p>
      ) : query.data.contentRemoved ? (
        <p>
          The content of this message (HTML, text and attachments) was removed: it is kept for a set number of days after sending. The
          message&apos;s details and events stay.
        </p>
      ) : query.data.withheld ? (
        <p>
          This is the service&apos;s own mail (a sign-in link, an invitation or a confirmation). Its links are meant for the recipient alone, so
          its content is never shown.
        </p>
      ) : (
        <>
          <p className="muted">
            From {query.data.fromName ? `${query.data.fromName} <${query.data.fromEmail}>` : query.data.fromEmail}
            {query.data.replyTo ? `, reply to ${query.data.replyTo}` : ""}. Remote images are not loaded here.
          </p>
          <div className="content-versions">
            <div className="content-version">
              <h3>HTML</h3>
              {query.data.html !== undefined ? (
                <iframe className="content-html" title="HTML version as sent" sandbox="" srcDoc={query.data.html} referrerPolicy="no-referrer" />
              ) : (
                <p>No HTML version.</p>
              )}
            </div>
            <div className="content-version">
              <h3>Text</h3>
              {query.data.text !== undefined ? (
                <pre className="content-text" role="region" tabIndex={0} aria-label="Text version as sent">
                  {query.data.text}
                </pre>
              ) : (
                <p>No text version.</p>
              )}
            </div>
          </div>
          <MessageAttachments messageId={messageId} attachments={query.data.attachments} />
        </>
      )}
    </section>
  );
}
