// Preact's memo without preact/compat (whose import patches Preact globally): a component that renders
// again only when a prop changes identity.
import { Component, type ComponentChildren, type FunctionComponent, h } from 'preact';

export function memo<P extends object>(render: FunctionComponent<P>): FunctionComponent<P> {
  class Memo extends Component<P> {
    override shouldComponentUpdate(next: P): boolean {
      const prev = this.props as Record<string, unknown>;
      const n = next as Record<string, unknown>;
      for (const k in n) if (n[k] !== prev[k]) return true;
      for (const k in prev) if (!(k in n)) return true;
      return false;
    }
    override render(props: P): ComponentChildren {
      return h(render, props);
    }
  }
  return Memo as unknown as FunctionComponent<P>;
}
