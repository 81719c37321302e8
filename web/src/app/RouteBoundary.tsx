import { Component, type ComponentType, lazy, type ReactNode } from "react";
import { Page } from "../components/Page.tsx";

/** A page of a route; a lazily loaded one can be asked to load its code again. */
export type RoutedPage = ComponentType & { reload?: () => void };

/**
 * A page whose code is loaded when it is first opened. A failed load (the
 * network dropped, or the service was updated and the old chunk is gone)
 * stays failed in React.lazy; `reload` starts a new one, which the route's
 * "Try again" does.
 */
export function lazyPage(load: () => Promise<{ default: ComponentType }>): RoutedPage {
  let Lazy = lazy(load);
  function LazyPage() {
    return <Lazy />;
  }
  LazyPage.reload = () => {
    Lazy = lazy(load);
  };
  return LazyPage;
}

interface BoundaryProps {
  children: ReactNode;
  /** Called before the page is drawn again (a lazy page loads its code anew). */
  onRetry?: () => void;
}

/**
 * Each route's error boundary: a page that fails to load or to draw shows
 * what happened and "Try again" in its place; the header and the other
 * pages stay usable.
 */
export class RouteBoundary extends Component<BoundaryProps, { error: unknown }> {
  override state: { error: unknown } = { error: undefined };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  private readonly retry = () => {
    this.props.onRetry?.();
    this.setState({ error: undefined });
  };

  override render() {
    const { error } = this.state;
    if (error === undefined) return this.props.children;
    return (
      <Page title="This page could not be shown">
        <p role="alert">The screen could not load or draw this page. The network may have dropped, or the service may have been updated.</p>
        <p className="hint mono break">{error instanceof Error ? error.message : String(error)}</p>
        <p>
          <button type="button" className="button button-primary" onClick={this.retry}>
            Try again
          </button>
        </p>
      </Page>
    );
  }
}
