import type { Route } from '../routing/hash-route.js';

const LINKS = [
  { href: '#/', label: 'Overview', testId: 'nav-overview', pages: ['overview'] },
  { href: '#/keys', label: 'Keys', testId: 'nav-keys', pages: ['keys'] },
  { href: '#/requests', label: 'Requests', testId: 'nav-requests', pages: ['requests', 'request'] },
  { href: '#/ledger', label: 'Ledger', testId: 'nav-ledger', pages: ['ledger'] },
] as const;

/** The pages and the sign-out button; wraps on a narrow screen. */
export function NavBar({ route, onSignOut }: { route: Route; onSignOut: () => void }) {
  return (
    <header class="nav-bar">
      <span class="brand">Tollgate</span>
      <nav aria-label="Dashboard">
        {LINKS.map((link) => (
          <a
            key={link.href}
            href={link.href}
            data-testid={link.testId}
            aria-current={(link.pages as readonly string[]).includes(route.page) ? 'page' : undefined}
          >
            {link.label}
          </a>
        ))}
      </nav>
      <button type="button" class="secondary" data-testid="signout" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}
