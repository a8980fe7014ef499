import { KeysPage } from './keys/keys-page.js';
import { LedgerPage } from './ledger/ledger-page.js';
import { OverviewPage } from './overview/overview-page.js';
import { RequestDetailPage } from './requests/request-detail-page.js';
import { RequestsPage } from './requests/requests-page.js';
import { parseHashRoute, type Route } from './routing/hash-route.js';
import { useHashLocation } from './routing/use-hash-location.js';
import { NavBar } from './ui/nav-bar.js';

/** The signed-in dashboard: the nav bar and the page the hash names. */
export function AppShell({ onSignOut }: { onSignOut: () => void }) {
  const route = parseHashRoute(useHashLocation());
  return (
    <>
      <NavBar route={route} onSignOut={onSignOut} />
      <main class="page">{pageOf(route)}</main>
    </>
  );
}

function pageOf(route: Route) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'keys':
      return <KeysPage />;
    case 'requests':
      return <RequestsPage />;
    case 'request':
      return <RequestDetailPage key={route.id} id={route.id} />;
    case 'ledger':
      return <LedgerPage />;
    case 'not-found':
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page at <code>{route.path}</code>. <a href="#/">Go to the overview</a>.
          </p>
        </section>
      );
  }
}
