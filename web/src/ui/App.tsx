// The app's frame: the top bar (organization, the open narrow, the person and "Log out"), the sidebar
// (a drawer behind a button on narrow screens), the message list, who is typing, and the compose box.
// Before the first registration it shows progress or what failed (never a blank page).
import { Component, type ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { narrowKey, narrowTitle } from '../state/narrow';
import { narrowContext } from '../state/store';
import { counts as unreadCountsOf } from '../state/sidebar';
import { Compose } from './Compose';
import { ConnectionBanner } from './ConnectionBanner';
import { MenuIcon } from './icons';
import { MessageList, typingText } from './MessageList';
import { Sidebar } from './Sidebar';
import { useClient } from './use-client';

/** color_scheme: 1 automatic (the system's), 2 dark, 3 light. */
function applyTheme(colorScheme: number): void {
  const theme = colorScheme === 2 ? 'dark' : colorScheme === 3 ? 'light' : '';
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

function Boot() {
  const client = useClient();
  return (
    <div class="boot">
      {client.ui.bootError ? (
        <div role="alert">
          <p>Could not load Parley: {client.ui.bootError}</p>
          <button type="button" onClick={() => client.retryNow()}>
            Try again
          </button>
        </div>
      ) : (
        <p>Loading…</p>
      )}
    </div>
  );
}

export function App() {
  const client = useClient();
  const store = client.store;
  const s = store?.state;
  const narrow = client.ui.narrow;
  const counts = s ? unreadCountsOf(s) : null;
  const title = s ? narrowTitle(narrow, narrowContext(s)) : '';
  useEffect(() => {
    if (!s || !counts) return;
    document.title = `${counts.home ? `(${counts.home}) ` : ''}${title} - ${s.realm.name} - Parley`;
  });
  useEffect(() => {
    if (s) applyTheme(Number(s.settings.color_scheme));
  }, [s?.settings.color_scheme]);
  if (!s || !counts) return <Boot />;
  const me = s.users.get(s.myId);
  const typing = typingText(client, narrow);
  const open = client.ui.sidebarOpen;
  return (
    <div class={`app${open ? ' sidebar-open' : ''}`}>
      <header class="topbar">
        <button type="button" class="menu" aria-label={open ? 'Close sidebar' : 'Open sidebar'} aria-expanded={open} aria-controls="sidebar" onClick={() => client.setSidebarOpen(!open)}>
          <MenuIcon />
          {counts.home ? <span class="count">{counts.home}</span> : null}
        </button>
        <span class="realm-name">{s.realm.name}</span>
        <h1 class="narrow-title">{title}</h1>
        <span class="me">{me?.full_name}</span>
        <form method="post" action="/logout" class="logout">
          <button type="submit" class="secondary">
            Log out
          </button>
        </form>
      </header>
      <ConnectionBanner />
      <div class="layout">
        <Sidebar counts={counts} />
        <div class="scrim" onClick={() => client.setSidebarOpen(false)} aria-hidden="true" />
        <main class="main">
          <MessageList key={narrowKey(narrow)} client={client} narrow={narrow} version={client.version} />
          <div class="typing" aria-live="polite">
            {typing}
          </div>
          <Compose narrow={narrow} />
        </main>
      </div>
    </div>
  );
}

/**
 * A bug in a screen must not leave a blank page: it is caught here, said in words, and a reload offered
 * (the compose box's text survives it, kept in sessionStorage).
 */
export class ErrorBoundary extends Component<{ children: ComponentChildren }, { error: string | null }> {
  override state = { error: null as string | null };

  override componentDidCatch(error: unknown): void {
    console.error('parley: the app failed', error);
    this.setState({ error: error instanceof Error ? error.message : String(error) });
  }

  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div class="boot" role="alert">
        <div>
          <p>Something went wrong in the app: {this.state.error}</p>
          <button type="button" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      </div>
    );
  }
}
