// Preact glue: the context holding the client, and a hook that re-renders on each of its changes.
import { createContext } from 'preact';
import { useContext, useLayoutEffect, useState } from 'preact/hooks';
import type { Client } from '../client/client';

export const ClientContext = createContext<Client | null>(null);

/** The client, re-rendering the caller whenever the store or the UI state changes. */
export function useClient(): Client {
  const client = useContext(ClientContext);
  if (!client) throw new Error('no client');
  const [rendered, setVersion] = useState(client.version);
  useLayoutEffect(() => {
    const update = () => setVersion(client.version);
    const unsubscribe = client.subscribe(update);
    // A change between this render and the subscription would otherwise never be drawn.
    if (client.version !== rendered) update();
    return unsubscribe;
  }, [client]);
  return client;
}
