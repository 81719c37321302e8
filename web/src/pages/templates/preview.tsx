import type { MessageInitShape } from "@bufbuild/protobuf";
import { useQuery } from "@connectrpc/connect-query";
import { type PreviewTemplateRequestSchema, type PreviewTemplateResponse, TemplatesService } from "@gen/mail/v1/templates_pb.js";
import { keepPreviousData } from "@tanstack/react-query";
import { useEffect, useState } from "react";

/** How long typing pauses before the preview is asked for again. */
export const PREVIEW_DELAY_MS = 400;

/** `value` once it has stopped changing for `delay` ms (compared as JSON, so a new object with the same content is no change). */
export function useSettled<T>(value: T, delay: number): T {
  const text = JSON.stringify(value);
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(text), delay);
    return () => window.clearTimeout(timer);
  }, [text, delay]);
  return JSON.parse(settled) as T;
}

/**
 * The server's rendering of content (a stored template by id, or subject,
 * HTML and text as typed) with sample values, through the send's own
 * renderer and sanitiser (PreviewTemplate), asked for again once typing
 * pauses; the previous answer stays shown meanwhile.
 */
export function usePreview(request: MessageInitShape<typeof PreviewTemplateRequestSchema>) {
  const settled = useSettled(request, PREVIEW_DELAY_MS);
  return useQuery(TemplatesService.method.previewTemplate, settled, { placeholderData: keepPreviousData, retry: false });
}

/**
 * A rendered preview: the subject, the HTML in a sandboxed frame
 * (sandbox="": no scripts, no same-origin, no forms) and the text version.
 */
export function RenderedPreview({ data }: { data: PreviewTemplateResponse }) {
  return (
    <>
      <p className="preview-subject">
        <span className="field-label">Subject: </span>
        <span data-testid="preview-subject">{data.subject}</span>
      </p>
      <iframe className="content-html" title="Preview of the HTML" sandbox="" srcDoc={data.html} referrerPolicy="no-referrer" />
      {data.text !== undefined ? (
        <pre className="content-text preview-text" role="region" tabIndex={0} aria-label="Preview of the text version">
          {data.text}
        </pre>
      ) : null}
    </>
  );
}
