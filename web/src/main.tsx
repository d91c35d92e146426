// The web app's entry: start the client (register, follow events) and draw the app into #app.
import { render } from 'preact';
import { Client } from './client/client';
import { App, ErrorBoundary } from './ui/App';
import { ClientContext } from './ui/use-client';
import './styles.css';

const client = new Client();
// The registration request leaves before the first render (the screens show "Loading…" meanwhile).
client.start();
const root = document.getElementById('app') as HTMLElement;
root.textContent = '';
render(
  <ErrorBoundary>
    <ClientContext.Provider value={client}>
      <App />
    </ClientContext.Provider>
  </ErrorBoundary>,
  root,
);
// For the browser tests and the benchmark: the client, to wait for it to settle (read-only use).
(window as unknown as { parley: Client }).parley = client;
