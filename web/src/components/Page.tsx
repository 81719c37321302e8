import { type ReactNode, useId } from "react";

/** The frame of a section's page: its heading (which names the page for assistive technology), the page's actions beside it, and the page. */
export function Page({ title, actions, before, titleClass, children }: { title: ReactNode; actions?: ReactNode; before?: ReactNode; titleClass?: string; children: ReactNode }) {
  const id = useId();
  return (
    <section className="page" aria-labelledby={id}>
      {before}
      <header className="page-header">
        <h1 id={id} className={titleClass}>
          {title}
        </h1>
        {actions}
      </header>
      {children}
    </section>
  );
}
