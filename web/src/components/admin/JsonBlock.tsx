/** A JSON text as sent, indented for reading (left as it is when it is not JSON); scrollable by keyboard. */
export function JsonBlock({ text, label }: { text: string; label: string }) {
  return (
    <pre className="code" tabIndex={0} role="region" aria-label={label}>
      {prettyJson(text)}
    </pre>
  );
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
