import type { GatewayDeps } from '../gateway-deps.js';

/**
 * Keeps a credit hold live while its request runs longer than the hold's TTL (a long stream): every
 * third of the TTL the expiry moves to now + TTL. The TTL still bounds how long a dead process
 * strands credit; a live one never loses its hold before it settles. Returns the stop function.
 */
export function keepHoldAlive(deps: GatewayDeps, reservationId: string, ttlMs: number): () => void {
  let stopped = false;
  let cancel = () => {};
  const arm = () => {
    cancel = deps.clock.schedule(
      () => {
        if (stopped) return;
        const now = deps.now();
        deps.storage.extendReservation(reservationId, now, now + ttlMs).then(
          (live) => {
            if (live && !stopped) arm();
          },
          (error: unknown) => {
            deps.logger.warn(
              { reservationId, err: { name: (error as Error)?.name } },
              'extending a credit hold failed',
            );
            if (!stopped) arm();
          },
        );
      },
      Math.max(1, Math.floor(ttlMs / 3)),
    );
  };
  arm();
  return () => {
    stopped = true;
    cancel();
  };
}
