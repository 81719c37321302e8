import { html } from "@codemirror/lang-html";
import { basicSetup, EditorView } from "codemirror";
import { useEffect, useRef } from "react";

/**
 * The template's HTML in CodeMirror 6 (syntax highlighting, brackets,
 * search, undo). Its styles are constructed stylesheets (style-mod's
 * adoptedStyleSheets), never an injected <style>, so it runs under the
 * screen's CSP. The editor owns its document: `value` seeds it once (a new
 * `resetKey` seeds it again, e.g. after a restore), and each edit is
 * reported through `onChange`.
 */
export function HtmlEditor(props: { label: string; value: string; resetKey: string; readOnly: boolean; onChange: (value: string) => void }) {
  const parent = useRef<HTMLDivElement>(null);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  const { value, resetKey, readOnly, label } = props;

  useEffect(() => {
    if (!parent.current) return;
    const view = new EditorView({
      doc: value,
      parent: parent.current,
      extensions: [
        basicSetup,
        html(),
        EditorView.lineWrapping,
        EditorView.editable.of(!readOnly),
        EditorView.contentAttributes.of({ "aria-label": label, ...(readOnly ? { "aria-readonly": "true" } : {}) }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange.current(update.state.doc.toString());
        }),
      ],
    });
    return () => view.destroy();
    // The document is seeded on mount and on a new resetKey only: edits live in the editor.
  }, [resetKey, readOnly, label]);

  return <div ref={parent} className="code-editor" data-testid="html-editor" />;
}
