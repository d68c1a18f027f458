// The app: the router over ROUTES, a page needing a session sent to sign-in (and back after), the shell around it.
import { ErrorBoundary } from 'preact-iso/lazy';
import { exec, LocationProvider, Route, Router, useLocation } from 'preact-iso/router';
import { useEffect, useState } from 'preact/hooks';
import { identity, restoreSession } from './session';
import { ErrorNotice } from './ui/form';
import { Shell } from './ui/layout';
import { ROUTES } from './routes';
import NotFound from './pages/not-found';

/** Where a signed-out visitor was going, so sign-in takes them there. Only an /app path: never another site. */
export function nextPath(query: Record<string, string>): string {
  const next = query['next'];
  return next && next.startsWith('/app/') && !next.startsWith('//') ? next : '/app/';
}

/** A route's page, behind sign-in unless it is public. Pages read their path parameters with useRoute(). */
function Gate(props: { route: (typeof ROUTES)[number]; path: string }) {
  const { url, route } = useLocation();
  const who = identity.value;
  const needsSession = !props.route.public;
  useEffect(() => {
    if (needsSession && who === null) route(`/app/sign-in?next=${encodeURIComponent(url)}`, true);
  }, [needsSession, who, url]);
  const Page = props.route.component;
  if (!needsSession) return <Page />;
  if (!who) return <p class="muted">Loading…</p>;
  return (
    <Shell>
      <Page />
    </Shell>
  );
}

// The page the address names starts loading with the app, not after the session check answers: one round trip
// fewer before the first page is usable.
ROUTES.find((r) => exec(location.pathname, r.path))
  ?.component.preload()
  .catch(() => undefined);

export function App() {
  // Why the session could not be checked (rate-limited, the API down): said with a retry, never taken for signed out.
  const [startError, setStartError] = useState<unknown>(undefined);
  const start = () => {
    setStartError(undefined);
    restoreSession().catch(setStartError);
  };
  useEffect(start, []);
  if (startError !== undefined)
    return (
      <main class="auth" id="main">
        <ErrorNotice error={startError} />
        <button type="button" onClick={start}>
          Try again
        </button>
      </main>
    );
  if (identity.value === undefined) return <p class="muted">Loading…</p>;
  return (
    <LocationProvider scope="/app">
      <ErrorBoundary>
        <Router>{[...ROUTES.map((r) => <Gate key={r.path} path={r.path} route={r} />), <Route key="404" default component={NotFound} />]}</Router>
      </ErrorBoundary>
    </LocationProvider>
  );
}
