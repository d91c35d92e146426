// Says when the server cannot be reached and when the next attempt is, with a button to try at once; and
// when the address named a narrow that could not be read.
import { useEffect, useState } from 'preact/hooks';
import { useClient } from './use-client';

export function ConnectionBanner() {
  const client = useClient();
  const c = client.ui.connection;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (c.state !== 'retrying') return;
    const t = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(t);
  }, [c]);
  return (
    <>
      {c.state === 'retrying' ? (
        <div class="banner banner-error" role="status">
          <span>
            {c.message} {now < c.retryAt ? `Trying again in ${Math.ceil((c.retryAt - now) / 1000)} s.` : 'Trying again…'}
          </span>
          <button type="button" onClick={() => client.retryNow()}>
            Try now
          </button>
        </div>
      ) : null}
      {client.ui.badAddress ? (
        <div class="banner" role="status">
          That link could not be read, so all messages are shown.
        </div>
      ) : null}
    </>
  );
}
