import { html } from "@codemirror/lang-html";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { basicSetup, EditorView } from "codemirror";
import { useEffect, useRef } from "react";

/**
 * The editor's look, in the screen's vocabulary (the theme's custom
 * properties reach into the shadow root).
 */
const SCREEN_THEME = EditorView.theme({
  "&": { color: "var(--color-text)", backgroundColor: "var(--color-surface)", minHeight: "16rem", maxHeight: "32rem", fontSize: "0.9rem" },
  "&.cm-focused": { outline: "2px solid var(--color-focus)", outlineOffset: "1px" },
  ".cm-scroller": { fontFamily: "var(--font-mono)" },
  ".cm-content": { caretColor: "var(--color-text)" },
  ".cm-gutters": { backgroundColor: "var(--color-raised)", color: "var(--color-muted)", borderRight: "1px solid var(--color-border)" },
  ".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "var(--color-raised)" },
});

/**
 * Syntax colours from the screen's text colours, which meet the contrast
 * rules in the light and the dark theme (CodeMirror's default style does
 * not, on either).
 */
const SCREEN_HIGHLIGHT = HighlightStyle.define([
  { tag: [tags.tagName, tags.angleBracket, tags.keyword], color: "var(--color-link)" },
  { tag: [tags.attributeName, tags.propertyName], color: "var(--color-ok)" },
  { tag: [tags.attributeValue, tags.string, tags.number, tags.atom], color: "var(--color-danger)" },
  { tag: [tags.comment, tags.meta, tags.processingInstruction, tags.documentMeta], color: "var(--color-muted)", fontStyle: "italic" },
  { tag: tags.invalid, color: "var(--color-danger)", textDecoration: "underline" },
]);

/**
 * The template's HTML in CodeMirror 6 (syntax highlighting, brackets,
 * search, undo). The editor lives in a shadow root of its own: CodeMirror
 * mounts its styles on the root it is in, and in a shadow root they are
 * constructed stylesheets (adoptedStyleSheets) where in the document they
 * would be an injected <style>, which the screen's CSP refuses. The editor
 * owns its document: `value` seeds it once (a new `resetKey` seeds it
 * again, e.g. after a restore), and each edit is reported through
 * `onChange`.
 */
export function HtmlEditor(props: { label: string; value: string; resetKey: string; readOnly: boolean; onChange: (value: string) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  const { value, resetKey, readOnly, label } = props;

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const root = element.shadowRoot ?? element.attachShadow({ mode: "open" });
    const view = new EditorView({
      doc: value,
      root,
      parent: root,
      extensions: [
        basicSetup,
        html(),
        SCREEN_THEME,
        syntaxHighlighting(SCREEN_HIGHLIGHT),
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

  return <div ref={host} className="code-editor" data-testid="html-editor" />;
}
