import { useMutation } from "@connectrpc/connect-query";
import { type MessageAttachmentInfo, MessageContentService } from "@gen/mail/v1/message_content_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { formatNumber } from "../../app/format.tsx";
import { type Column, ListTable } from "../../components/list/ListView.tsx";

/** A size for people: bytes, KB or MB (1000s, as file managers show them). */
function formatSize(bytes: bigint): string {
  const n = Number(bytes);
  if (n < 1000) return `${formatNumber(n)} B`;
  if (n < 1_000_000) return `${formatNumber(n / 1000, { maximumFractionDigits: 1 })} KB`;
  return `${formatNumber(n / 1_000_000, { maximumFractionDigits: 1 })} MB`;
}

/**
 * Saves `content` as a file named `filename`. The bytes become a Blob typed
 * application/octet-stream whatever the file's own type, handed to the
 * browser as a download: a file sent by a customer's system is never
 * opened or rendered in the screen's origin.
 */
function saveAs(filename: string, content: Uint8Array): void {
  const url = URL.createObjectURL(new Blob([content as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.rel = "noopener";
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has handed the URL to the download.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The files sent with a message, with their sizes, each downloadable. */
export function MessageAttachments({ messageId, attachments }: { messageId: string; attachments: readonly MessageAttachmentInfo[] }) {
  const download = useMutation(MessageContentService.method.getMessageAttachment, {
    onSuccess: (file) => saveAs(file.filename, file.content),
  });
  const columns: readonly Column<MessageAttachmentInfo>[] = [
    { header: "File", role: "title", wide: true, cell: (a) => <span className="break">{a.filename}</span> },
    { header: "Type", cell: (a) => <span className="mono">{a.contentType}</span> },
    { header: "Size", cell: (a) => <span className="number">{formatSize(a.size)}</span> },
    { header: "Shown", cell: (a) => (a.contentId ? `inline (cid:${a.contentId})` : "attached") },
    {
      header: "Actions",
      role: "actions",
      cell: (a) => (
        <button
          type="button"
          className="button"
          disabled={download.isPending}
          aria-label={`Download ${a.filename}`}
          onClick={() => download.mutate({ messageId, position: a.position })}
        >
          Download
        </button>
      ),
    },
  ];
  return (
    <div>
      <h3>Attachments</h3>
      {attachments.length === 0 ? (
        <p>No attachments.</p>
      ) : (
        <ListTable label="Attachments" columns={columns} items={attachments} rowKey={(a) => String(a.position)} />
      )}
      {download.isError ? (
        <p role="alert" className="error">
          {errorMessage(download.error)}
        </p>
      ) : null}
    </div>
  );
}
