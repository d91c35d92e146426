// A small path router: static segments, typed `{name}` / `{name:int}` parameters and a trailing
// `{name...}` rest segment. Static beats int beats string beats rest, with backtracking, so
// `/users/me`, `/users/{user_id:int}` and `/users/{email}` coexist and are told apart by the value.
import { errors } from './errors';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface ParamEdge<T> {
  name: string;
  kind: 'int' | 'str';
  node: Node<T>;
}

interface Node<T> {
  statics: Map<string, Node<T>>;
  params: ParamEdge<T>[];
  rest: { name: string; handlers: Map<Method, T> } | null;
  handlers: Map<Method, T>;
}

const newNode = <T>(): Node<T> => ({ statics: new Map(), params: [], rest: null, handlers: new Map() });

export type Match<T> =
  | { kind: 'found'; handler: T; params: Record<string, string> }
  | { kind: 'method'; allowed: Method[] }
  | { kind: 'none' };

const INT = /^[0-9]+$/;

function splitPath(path: string): string[] {
  // A trailing slash names the same resource.
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}

function decodeSegment(seg: string): string {
  if (seg.indexOf('%') === -1) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    throw errors.badRequest('Malformed percent-encoding in request');
  }
}

/** Routes keyed by method and path pattern. */
export class Router<T> {
  private root: Node<T> = newNode();
  /** Handlers of the fully static patterns by path: most requests are found here without a walk. */
  private exact = new Map<string, Map<Method, T>>();
  private patterns: { method: Method; pattern: string }[] = [];

  add(method: Method, pattern: string, handler: T): void {
    let node = this.root;
    const segs = splitPath(pattern);
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i];
      const m = /^\{(\w+)(\.\.\.|:int)?\}$/.exec(seg);
      if (m && m[2] === '...') {
        if (i !== segs.length - 1) throw new Error(`rest segment must be last: ${pattern}`);
        node.rest ??= { name: m[1], handlers: new Map() };
        if (node.rest.handlers.has(method)) throw new Error(`duplicate route ${method} ${pattern}`);
        node.rest.handlers.set(method, handler);
        this.patterns.push({ method, pattern });
        return;
      }
      if (m) {
        const kind = m[2] === ':int' ? 'int' : 'str';
        let edge = node.params.find((e) => e.kind === kind);
        if (!edge) {
          edge = { name: m[1], kind, node: newNode() };
          node.params.push(edge);
          node.params.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'int' ? -1 : 1));
        } else if (edge.name !== m[1]) {
          throw new Error(`conflicting parameter names at ${pattern}`);
        }
        node = edge.node;
      } else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode()));
        node = next;
      }
    }
    if (node.handlers.has(method)) throw new Error(`duplicate route ${method} ${pattern}`);
    node.handlers.set(method, handler);
    this.patterns.push({ method, pattern });
    if (!pattern.includes('{')) this.exact.set(segs.length === 0 ? '/' : `/${segs.join('/')}`, node.handlers);
  }

  /** Every registered (method, pattern), in registration order. */
  routes(): readonly { method: Method; pattern: string }[] {
    return this.patterns;
  }

  /** Finds the handler; HEAD is answered by GET. */
  match(method: string, path: string): Match<T> {
    // Static routes win over parameters anyway, so an exact hit for the method is the answer; anything
    // else (another method, percent-encoding, a trailing slash) takes the full walk below.
    const direct = this.exact.get(path)?.get((method === 'HEAD' ? 'GET' : method) as Method);
    if (direct) return { kind: 'found', handler: direct, params: {} };
    const segs = splitPath(path).map(decodeSegment);
    const want = (method === 'HEAD' ? 'GET' : method) as Method;
    const params: Record<string, string> = {};
    let allowed: Map<Method, T> | null = null;
    const walk = (node: Node<T>, i: number): T | null => {
      if (i === segs.length) {
        if (node.handlers.size > 0) {
          const h = node.handlers.get(want);
          if (h) return h;
          allowed ??= node.handlers;
        }
        return null;
      }
      const seg = segs[i];
      const st = node.statics.get(seg);
      if (st) {
        const r = walk(st, i + 1);
        if (r) return r;
      }
      for (const edge of node.params) {
        if (seg === '' || (edge.kind === 'int' && !INT.test(seg))) continue;
        params[edge.name] = seg;
        const r = walk(edge.node, i + 1);
        if (r) return r;
        delete params[edge.name];
      }
      if (node.rest) {
        const h = node.rest.handlers.get(want);
        if (h) {
          params[node.rest.name] = segs.slice(i).join('/');
          return h;
        }
        allowed ??= node.rest.handlers;
      }
      return null;
    };
    const handler = walk(this.root, 0);
    if (handler) return { kind: 'found', handler, params };
    if (allowed) {
      const methods = METHODS.filter((m) => (allowed as Map<Method, T>).has(m));
      return { kind: 'method', allowed: methods };
    }
    return { kind: 'none' };
  }
}
