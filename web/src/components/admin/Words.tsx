/** A short list of names (scopes, events), one per line, each kept whole. */
export function Words({ items }: { items: readonly string[] }) {
  return (
    <ul className="words mono">
      {items.map((item) => (
        <li key={item}>{item}</li>
      ))}
    </ul>
  );
}
